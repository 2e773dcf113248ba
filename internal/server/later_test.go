package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// laterHandler answers Produce with acks=-1 through Later: the response
// (its first partition's error code set to the request's correlation id, a
// mark the test reads back) is completed once release(corr) is called, or
// not answered at all if the request's TimeoutMillis is 0 (finish reports
// false); with TimeoutMillis 1 finish panics. Metadata is answered at once,
// noting whether any Later answer was still open then.
type laterHandler struct {
	started chan int32 // correlation ids of produce requests handled

	mu       sync.Mutex
	releases map[int32]chan struct{}
	open     atomic.Int32 // Later answers not finished
	overlap  atomic.Bool  // a Metadata request was handled while one was open
}

// startLater starts a server on a laterHandler and dials it.
func startLater(t *testing.T) (*laterHandler, *testServer, *rawClient) {
	t.Helper()
	h := newLaterHandler()
	ts := startServer(t, Config{Handler: h})
	return h, ts, dial(t, ts.Addr())
}

func newLaterHandler() *laterHandler {
	return &laterHandler{started: make(chan int32, 16), releases: map[int32]chan struct{}{}}
}

func (h *laterHandler) gate(corr int32) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.releases[corr]
	if !ok {
		ch = make(chan struct{})
		h.releases[corr] = ch
	}
	return ch
}

func (h *laterHandler) release(corr int32) { close(h.gate(corr)) }

func (h *laterHandler) Handle(ctx context.Context, c *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	switch req := req.(type) {
	case *kmsg.ProduceRequest:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		rt := kmsg.NewProduceResponseTopic()
		rt.Partitions = append(rt.Partitions, kmsg.NewProduceResponseTopicPartition())
		resp.Topics = append(resp.Topics, rt)
		corr, gate, answer, timeout := hdr.CorrelationID, h.gate(hdr.CorrelationID), req.TimeoutMillis != 0, req.TimeoutMillis
		h.open.Add(1)
		finish := func() bool {
			defer h.open.Add(-1)
			select {
			case <-gate:
			case <-ctx.Done():
				return false
			}
			if timeout == 1 {
				panic("later handler: asked to panic")
			}
			resp.Topics[0].Partitions[0].ErrorCode = int16(corr)
			return answer
		}
		if !Later(ctx, finish) {
			return nil, errors.New("later handler: Later refused")
		}
		h.started <- corr
		return resp, nil
	case *kmsg.MetadataRequest:
		if h.open.Load() > 0 {
			h.overlap.Store(true)
		}
		return req.ResponseKind(), nil
	}
	return nil, errors.New("later handler: unexpected request")
}

func laterProduce(answer bool) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(9)
	r.Acks = -1
	r.TimeoutMillis = 0 // the mark of a request finish answers nothing for
	if answer {
		r.TimeoutMillis = 30_000
	}
	return r
}

// readProduceMark reads the next response, which must be corr's produce
// response carrying its mark.
func readProduceMark(t *testing.T, c *rawClient, corr int32) {
	t.Helper()
	resp := c.read(laterProduce(true).ResponseKind(), corr).(*kmsg.ProduceResponse)
	if got := resp.Topics[0].Partitions[0].ErrorCode; got != int16(corr) {
		t.Fatalf("response %d carries the mark of %d", corr, got)
	}
}

// writeProduces sends produce requests 1..n in one write and waits until
// each is handled.
func writeProduces(t *testing.T, c *rawClient, h *laterHandler, n int32) {
	t.Helper()
	var batch []byte
	for corr := int32(1); corr <= n; corr++ {
		batch = append(batch, encodeRequest(laterProduce(true), corr)...)
	}
	c.write(batch)
	for corr := int32(1); corr <= n; corr++ {
		waitStarted(t, h, corr)
	}
}

func waitStarted(t *testing.T, h *laterHandler, corr int32) {
	t.Helper()
	select {
	case got := <-h.started:
		if got != corr {
			t.Fatalf("produce %d handled, want %d", got, corr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("produce %d not handled while the ones before it wait", corr)
	}
}

// TestLaterOverlapsRequestsOfItsKey: produce requests pipelined on one
// connection are all handled while the first one's answer waits (a
// serving loop that waited for it would handle only the first), and their
// responses go out in request order whatever order they complete in.
// The error codes of Later answers are counted (their marks: 1
// OFFSET_OUT_OF_RANGE, 2 CORRUPT_MESSAGE, 3 UNKNOWN_TOPIC_OR_PARTITION).
func TestLaterOverlapsRequestsOfItsKey(t *testing.T) {
	h, ts, c := startLater(t)
	writeProduces(t, c, h, 3)
	for corr := int32(3); corr >= 1; corr-- {
		h.release(corr)
	}
	for corr := int32(1); corr <= 3; corr++ {
		readProduceMark(t, c, corr)
	}
	for _, name := range []string{"OFFSET_OUT_OF_RANGE", "CORRUPT_MESSAGE", "UNKNOWN_TOPIC_OR_PARTITION"} {
		if n := errorsCounted(t, ts, "Produce", name); n != 1 {
			t.Errorf("Produce %s counted %v times, want 1", name, n)
		}
	}
}

// TestLaterHoldsOtherKeys: a request of another key waits until the Later
// answers before it are complete, so it sees what it would see after them.
func TestLaterHoldsOtherKeys(t *testing.T) {
	h, _, c := startLater(t)
	c.write(append(encodeRequest(laterProduce(true), 1), encodeRequest(metadataRequest(9), 2)...))
	waitStarted(t, h, 1)
	time.Sleep(50 * time.Millisecond) // room for the Metadata request to be handled too early
	h.release(1)
	readProduceMark(t, c, 1)
	c.read(metadataRequest(9).ResponseKind(), 2)
	if h.overlap.Load() {
		t.Fatal("Metadata handled while the produce before it was unanswered")
	}
}

// TestLaterFlushesEarlierResponses: a response ready before a Later answer
// that waits goes out while it waits, not with it. The three are queued
// before the first is released, so the writer takes at least the last two
// together: each response is read while the one after it waits.
func TestLaterFlushesEarlierResponses(t *testing.T) {
	h, _, c := startLater(t)
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	writeProduces(t, c, h, 3)
	h.release(1)
	readProduceMark(t, c, 1) // while 2 and 3 wait
	h.release(2)
	readProduceMark(t, c, 2) // while 3 waits
	h.release(3)
	readProduceMark(t, c, 3)
}

// TestLaterNothingToAnswer: a Later answer that finishes with nothing to
// answer leaves no response, and the ones after it go on.
func TestLaterNothingToAnswer(t *testing.T) {
	h, _, c := startLater(t)
	c.write(append(encodeRequest(laterProduce(false), 1), encodeRequest(laterProduce(true), 2)...))
	waitStarted(t, h, 1)
	waitStarted(t, h, 2)
	h.release(1)
	h.release(2)
	readProduceMark(t, c, 2)
}

// TestLaterPanicClosesOnlyThatConnection: a finish that panics is
// recovered as a handler's panic: its connection closes with an error
// log line, the server and its other connections go on.
func TestLaterPanicClosesOnlyThatConnection(t *testing.T) {
	h, ts, c := startLater(t)
	r := laterProduce(true)
	r.TimeoutMillis = 1
	c.write(encodeRequest(r, 1))
	waitStarted(t, h, 1)
	h.release(1)
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := c.recv(); err == nil {
		t.Fatal("a response after the panic")
	}
	other := dial(t, ts.Addr())
	other.write(encodeRequest(laterProduce(true), 7))
	waitStarted(t, h, 7)
	h.release(7)
	readProduceMark(t, other, 7)
	if !strings.Contains(ts.logs.String(), "asked to panic") {
		t.Fatalf("no log line of the panic:\n%s", ts.logs.String())
	}
}

package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// throttleHandler throttles the client for d on every Produce and notes
// when each request was handled and each Produce's size. An acks=-1
// Produce is answered through Later, wait after its handler returned.
type throttleHandler struct {
	d, wait time.Duration
	handled chan handled
	sizes   chan int
}

type handled struct {
	conn uint64
	at   time.Time
}

func (h *throttleHandler) Handle(ctx context.Context, c *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	h.handled <- handled{c.ID, time.Now()}
	if r, ok := req.(*kmsg.ProduceRequest); ok {
		h.sizes <- c.RequestSize()
		c.Throttle(h.d / 2)
		c.Throttle(h.d) // the longest wins
		switch r.Acks {
		case 0:
			return nil, nil
		case -1:
			if !Later(ctx, func() bool { time.Sleep(h.wait); return true }) {
				return nil, errors.New("throttle handler: Later refused")
			}
		}
		return r.ResponseKind(), nil
	}
	return wire.ApiVersionsResponse(hdr.Version, 0), nil
}

// A throttled response mutes the connection (KIP-219): a request
// pipelined behind it is handled only once the throttle has passed, also
// after a Produce with acks=0, which has no response. Other connections
// are not muted.
func TestThrottleMutesConnection(t *testing.T) {
	const d = time.Second
	h := &throttleHandler{d: d, handled: make(chan handled, 16), sizes: make(chan int, 16)}
	ts := startServer(t, Config{Handler: h})
	c := dial(t, ts.Addr())
	produce := func(acks int16) *kmsg.ProduceRequest {
		r := kmsg.NewPtrProduceRequest()
		r.SetVersion(9)
		r.Acks = acks
		return r
	}
	versions := kmsg.NewPtrApiVersionsRequest()
	for _, acks := range []int16{1, 0} {
		frame := encodeRequest(produce(acks), 1)
		c.write(append(frame, encodeRequest(versions, 2)...))
		first := <-h.handled
		if size := <-h.sizes; size != len(frame)-4 {
			t.Fatalf("RequestSize %d, want the frame's %d bytes", size, len(frame)-4)
		}
		if acks != 0 {
			c.read(produce(acks).ResponseKind(), 1)
		}
		// Meanwhile another connection is served, before the muted one.
		dial(t, ts.Addr()).roundTrip(versions, 7)
		if next := <-h.handled; next.conn == first.conn {
			t.Fatalf("acks=%d: the muted connection was served before another one", acks)
		}
		c.read(versions.ResponseKind(), 2)
		if waited := (<-h.handled).at.Sub(first.at); waited < d {
			t.Fatalf("acks=%d: the request after a %v throttle was handled after %v", acks, d, waited)
		}
	}
}

// A throttled acks=-1 Produce answered through Later mutes the connection
// once its answer is complete, as Kafka mutes the channel once the
// response is sent: the Produce pipelined behind it (of the same key, which
// Later otherwise lets through at once) is handled only after the answer's
// wait and the throttle.
func TestThrottleAfterLaterAnswer(t *testing.T) {
	const d, wait = 500 * time.Millisecond, 400 * time.Millisecond
	h := &throttleHandler{d: d, wait: wait, handled: make(chan handled, 16), sizes: make(chan int, 16)}
	ts := startServer(t, Config{Handler: h})
	c := dial(t, ts.Addr())
	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(9)
	produce.Acks = -1
	c.write(append(encodeRequest(produce, 1), encodeRequest(produce, 2)...))
	first := <-h.handled
	<-h.sizes
	c.read(produce.ResponseKind(), 1)
	second := <-h.handled
	<-h.sizes
	c.read(produce.ResponseKind(), 2)
	if waited := second.at.Sub(first.at); waited < wait+d {
		t.Fatalf("the produce after a %v throttle answered after %v was handled after %v", d, wait, waited)
	}
}

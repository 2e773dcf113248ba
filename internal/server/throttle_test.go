package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// throttleHandler throttles the client for d on every Produce and notes
// when each request was handled and each Produce's size.
type throttleHandler struct {
	d       time.Duration
	handled chan handled
	sizes   chan int
}

type handled struct {
	conn uint64
	at   time.Time
}

func (h *throttleHandler) Handle(_ context.Context, c *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	h.handled <- handled{c.ID, time.Now()}
	if r, ok := req.(*kmsg.ProduceRequest); ok {
		h.sizes <- c.RequestSize()
		c.Throttle(h.d / 2)
		c.Throttle(h.d) // the longest wins
		if r.Acks == 0 {
			return nil, nil
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

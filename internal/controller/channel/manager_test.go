package channel

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/controller"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// fakeBroker answers UpdateMetadata with its controller epoch as the error
// code, on every connection it accepts; the first dropFirst requests close
// their connection instead of answering.
type fakeBroker struct {
	ln net.Listener

	mu        sync.Mutex
	dropFirst int
	got       []int32 // controller epochs, in arrival order
	conns     int
	busy      int // requests being handled now
	maxBusy   int
	queued    int // requests that had the next one already sent when read
}

func startFakeBroker(t *testing.T, dropFirst int) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeBroker{ln: ln, dropFirst: dropFirst}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns++
			f.mu.Unlock()
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeBroker) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		frame, err := wire.ReadFrame(r, 1<<30)
		if err != nil {
			return
		}
		hdr, req, err := wire.ParseRequest(frame)
		if err != nil {
			return
		}
		um := req.(*kmsg.UpdateMetadataRequest)
		f.mu.Lock()
		if r.Buffered() > 0 {
			f.queued++
		}
		drop := f.dropFirst > 0
		if drop {
			f.dropFirst--
		} else {
			f.got = append(f.got, um.ControllerEpoch)
		}
		f.busy++
		f.maxBusy = max(f.maxBusy, f.busy)
		f.mu.Unlock()
		time.Sleep(time.Millisecond) // lets a second request overlap, were it sent
		f.mu.Lock()
		f.busy--
		f.mu.Unlock()
		if drop {
			return
		}
		resp := kmsg.NewPtrUpdateMetadataResponse()
		resp.SetVersion(hdr.Version)
		resp.ErrorCode = int16(um.ControllerEpoch)
		if _, err := c.Write(wire.AppendResponse(nil, hdr, resp)); err != nil {
			return
		}
	}
}

// broker is the fake's registration: its first listener is a client one
// nothing listens on (port 1), the controller's (PLAINTEXT) the fake.
func (f *fakeBroker) broker(id int32) metadata.Broker {
	a := f.ln.Addr().(*net.TCPAddr)
	return metadata.NewBroker(id, []metadata.Endpoint{
		{Listener: "CLIENT", Host: "127.0.0.1", Port: 1, Protocol: "PLAINTEXT"},
		{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: int32(a.Port), Protocol: "PLAINTEXT"}}, "", time.Now())
}

func umWithEpoch(e int32) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerEpoch = 8, e
	return req
}

// A broker's requests are sent in order without waiting for earlier
// answers (the broker still handles them one at a time), each answer goes
// to its own callback, and the requests unanswered when their connection
// broke are sent again, in order, on a new one.
func TestManagerOrderAndRetry(t *testing.T) {
	f := startFakeBroker(t, 2)
	m := NewManager(nil, 10*time.Second, "PLAINTEXT")
	defer m.Close()
	m.AddBroker(f.broker(7))
	const n = 20
	answers := make(chan int16, n)
	for e := int32(1); e <= n; e++ {
		m.Send(7, umWithEpoch(e), func(resp kmsg.Response, err error) {
			if err != nil {
				t.Errorf("epoch %d: %v", e, err)
				answers <- -1
				return
			}
			answers <- resp.(*kmsg.UpdateMetadataResponse).ErrorCode
		})
	}
	for want := int16(1); want <= n; want++ {
		select {
		case got := <-answers:
			if got != want {
				t.Fatalf("answer %d, want %d (in order, each to its own callback)", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer for epoch %d", want)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) != n || f.got[0] != 1 || f.got[n-1] != n {
		t.Fatalf("broker saw %v", f.got)
	}
	if f.conns != 3 {
		t.Fatalf("%d connections, want 3 (two dropped mid-request)", f.conns)
	}
	if f.maxBusy != 1 {
		t.Fatalf("the broker handled %d requests at once, want 1", f.maxBusy)
	}
	if f.queued == 0 {
		t.Fatal("no request was sent before the one ahead of it was answered")
	}
}

// Requests queued for a removed broker, or sent to one never added, are
// dropped without a callback.
func TestManagerRemovedBroker(t *testing.T) {
	m := NewManager(nil, 10*time.Second, "PLAINTEXT")
	defer m.Close()
	called := make(chan struct{}, 1)
	m.Send(9, umWithEpoch(1), func(kmsg.Response, error) { called <- struct{}{} })
	// A broker that never answers: the request stays in flight until the
	// broker is removed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	m.AddBroker(metadata.NewBroker(3, []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: int32(ln.Addr().(*net.TCPAddr).Port), Protocol: "PLAINTEXT"}}, "", time.Now()))
	m.Send(3, umWithEpoch(1), func(kmsg.Response, error) { called <- struct{}{} })
	m.Send(3, umWithEpoch(2), func(kmsg.Response, error) { called <- struct{}{} })
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m.RemoveBroker(3)
	select {
	case <-called:
		t.Fatal("a callback ran for a removed or unknown broker")
	case <-time.After(50 * time.Millisecond):
	}
}

var _ controller.Sender = (*Manager)(nil)

package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// fakeHandler answers ApiVersions from wire, Metadata by echoing the
// requested topic names (and acting on a few magic names), and Produce with
// acks=0 with no response.
type fakeHandler struct {
	running, maxRunning atomic.Int32
	blocked             chan struct{} // receives when a "block" or "wait" request starts
	cancelled           chan struct{} // receives when a "block" request sees its ctx end
	release             chan struct{} // a "wait" request returns once closed
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{
		blocked:   make(chan struct{}, 16),
		cancelled: make(chan struct{}, 16),
		release:   make(chan struct{}),
	}
}

func (h *fakeHandler) Handle(ctx context.Context, c *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for m := h.maxRunning.Load(); n > m && !h.maxRunning.CompareAndSwap(m, n); m = h.maxRunning.Load() {
	}
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return wire.ApiVersionsResponse(hdr.Version, 0), nil
	case *kmsg.ProduceRequest:
		if req.Acks == 0 {
			return nil, nil
		}
		return req.ResponseKind(), nil
	case *kmsg.MetadataRequest:
		return h.metadata(ctx, c, req)
	}
	return nil, errors.New("fake: unexpected request")
}

func (h *fakeHandler) metadata(ctx context.Context, c *Conn, req *kmsg.MetadataRequest) (kmsg.Response, error) {
	resp := kmsg.NewPtrMetadataResponse()
	b := kmsg.NewMetadataResponseBroker()
	host, port, _ := net.SplitHostPort(c.Local.String())
	b.Host = host
	b.Port = int32(mustAtoi(port))
	resp.Brokers = append(resp.Brokers, b)
	for _, t := range req.Topics {
		switch *t.Topic {
		case "block":
			h.blocked <- struct{}{}
			<-ctx.Done()
			h.cancelled <- struct{}{}
			return nil, ctx.Err()
		case "wait":
			h.blocked <- struct{}{}
			<-h.release
		case "fail":
			return nil, errors.New("fake: asked to fail")
		case "panic":
			panic("fake: asked to panic")
		case "wrong":
			return kmsg.NewPtrProduceResponse(), nil
		}
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = t.Topic
		if *t.Topic == "unknown" {
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func mustAtoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// logBuffer collects log lines from every connection goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type testServer struct {
	*Server
	h    *fakeHandler
	logs *logBuffer
	reg  *prometheus.Registry
}

func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	ts := &testServer{h: newFakeHandler(), logs: &logBuffer{}, reg: prometheus.NewRegistry()}
	cfg.Addr = "127.0.0.1:0"
	if cfg.Handler == nil {
		cfg.Handler = ts.h
	}
	cfg.Logger = slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Registerer = ts.reg
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = s
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// rawClient speaks the protocol by hand over one TCP connection.
type rawClient struct {
	t  *testing.T
	nc net.Conn
}

func dial(t *testing.T, addr net.Addr) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t, nc}
}

func encodeRequest(req kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, corr)
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one response frame and returns its correlation id and the rest
// (tag byte included for flexible responses).
func (c *rawClient) recv() (int32, []byte, error) {
	frame, err := wire.ReadFrame(c.nc, 1<<24)
	if err != nil {
		return 0, nil, err
	}
	if len(frame) < 4 {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return int32(binary.BigEndian.Uint32(frame)), frame[4:], nil
}

// roundTrip sends req and decodes the response into resp.
func (c *rawClient) roundTrip(req kmsg.Request, corr int32) kmsg.Response {
	c.t.Helper()
	c.write(encodeRequest(req, corr))
	return c.read(req.ResponseKind(), corr)
}

func (c *rawClient) read(resp kmsg.Response, corr int32) kmsg.Response {
	c.t.Helper()
	gotCorr, body, err := c.recv()
	if err != nil {
		c.t.Fatalf("reading response %d: %v", corr, err)
	}
	if gotCorr != corr {
		c.t.Fatalf("correlation id %d, want %d", gotCorr, corr)
	}
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decoding %s v%d: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
	return resp
}

// expectClosed reads until the server closes the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang guard, not a timing assertion
	if _, err := io.Copy(io.Discard, c.nc); err != nil {
		c.t.Fatalf("connection not closed by the server: %v", err)
	}
}

func metadataRequest(version int16, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(version)
	for _, name := range topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, t)
	}
	return req
}

// checkMetadataEcho fails unless resp lists exactly topics.
func checkMetadataEcho(t *testing.T, resp kmsg.Response, topics ...string) {
	t.Helper()
	m := resp.(*kmsg.MetadataResponse)
	if len(m.Topics) != len(topics) {
		t.Fatalf("%d topics, want %v", len(m.Topics), topics)
	}
	for i, name := range topics {
		if *m.Topics[i].Topic != name {
			t.Fatalf("topic %d = %q, want %q", i, *m.Topics[i].Topic, name)
		}
	}
}

// settleGoroutines waits until the goroutine count drops to at most base.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	var n int
	for range 500 { // up to ~5s: a hang guard
		if n = runtime.NumGoroutine(); n <= base {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines, want at most %d:\n%s", n, base, buf[:runtime.Stack(buf, true)])
}

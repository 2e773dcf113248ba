// fakeLeader: a leader broker for the end-to-end tests, served by
// internal/server. It answers ApiVersions, OffsetForLeaderEpoch and Fetch
// (long-polling up to MaxWait) from fakeLogs, checking the current leader
// epoch as Kafka does, and records what it was asked. With sessions set it
// keeps KIP-227 fetch sessions (sessions.go of the fake); otherwise it
// answers every fetch as sessionless.
package fetcher

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/wire"
)

type fakeLeader struct {
	mu          sync.Mutex
	epoch       int32
	logs        map[kafka.TopicPartition]*fakeLog
	changed     chan struct{}           // closed and replaced by notify
	askedEpochs []int32                 // LeaderEpoch of every OffsetForLeaderEpoch partition
	fenced      int                     // FENCED_LEADER_EPOCH answers
	maxParts    int                     // most partitions in one Fetch
	badReplica  int                     // requests whose ReplicaID was not the follower's
	clients     map[string]*server.Conn // the connection of each client id, last seen
	stall       int                     // Fetch requests still to leave unanswered until their connection closes

	sessions bool                   // keep fetch sessions
	sess     map[int32]*fakeSession // by id
	nextID   int32
	listed   []int // partitions listed by each Fetch request
}

const followerID = 3

func newFakeLeader(epoch int32, logs map[kafka.TopicPartition]*fakeLog) *fakeLeader {
	return &fakeLeader{epoch: epoch, logs: logs, changed: make(chan struct{})}
}

// notify wakes long-polling fetches after a change to a log.
func (h *fakeLeader) notify() {
	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

// serve starts a server for h on a fresh port; the server stops at cleanup
// or when the returned func is called.
func (h *fakeLeader) serve(t *testing.T) (addr string, stop func()) {
	t.Helper()
	s, err := server.New(server.Config{Addr: "127.0.0.1:0", Handler: h, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			s.Close()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s.Addr().String(), stop
}

func (h *fakeLeader) Handle(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	if hdr.ClientID != nil {
		h.mu.Lock()
		if h.clients == nil {
			h.clients = map[string]*server.Conn{}
		}
		h.clients[*hdr.ClientID] = c
		h.mu.Unlock()
	}
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return wire.ApiVersionsResponse(hdr.Version, 0), nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return h.leaderEpochs(req), nil
	case *kmsg.FetchRequest:
		h.mu.Lock()
		stall := h.stall > 0
		if stall {
			h.stall--
		}
		h.mu.Unlock()
		if stall { // as a leader cut off, or whose answer never arrives
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return h.fetch(ctx, req), nil
	}
	return nil, errors.New("fake leader: unexpected request")
}

// epochCode is Kafka's check of a request's current leader epoch.
func (h *fakeLeader) epochCode(current int32) int16 {
	switch {
	case current < h.epoch:
		h.fenced++
		return kerr.FencedLeaderEpoch.Code
	case current > h.epoch:
		return kerr.UnknownLeaderEpoch.Code
	}
	return 0
}

func (h *fakeLeader) leaderEpochs(req *kmsg.OffsetForLeaderEpochRequest) kmsg.Response {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.ReplicaID != followerID {
		h.badReplica++
	}
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.LeaderEpoch, rp.EndOffset = p.Partition, -1, -1
			h.askedEpochs = append(h.askedEpochs, p.LeaderEpoch)
			l := h.logs[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			if l == nil {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else if rp.ErrorCode = h.epochCode(p.CurrentLeaderEpoch); rp.ErrorCode == 0 {
				rp.LeaderEpoch, rp.EndOffset = l.EndOffsetForEpoch(p.LeaderEpoch)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (h *fakeLeader) fetch(ctx context.Context, req *kmsg.FetchRequest) kmsg.Response {
	h.mu.Lock()
	changed := h.changed
	parts, sess, code := h.resolve(req)
	h.mu.Unlock()
	if code != 0 {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = code
		return resp
	}
	resp, n := h.fetchOnce(req, parts, sess)
	if n == 0 {
		t := time.NewTimer(time.Duration(req.MaxWaitMillis) * time.Millisecond)
		defer t.Stop()
		select {
		case <-changed:
			resp, _ = h.fetchOnce(req, parts, sess)
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return resp
}

// fetchOnce answers about parts now; n counts bytes and errors (0: nothing
// to say). An incremental session fetch leaves out the partitions without
// news.
func (h *fakeLeader) fetchOnce(req *kmsg.FetchRequest, parts []*fakePart, sess *fakeSession) (*kmsg.FetchResponse, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.ReplicaID != followerID {
		h.badReplica++
	}
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if sess != nil {
		resp.SessionID = sess.id
	}
	n := 0
	for _, p := range parts {
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition = p.tp.Partition
		l := h.logs[p.tp]
		if l == nil {
			rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		} else if rp.ErrorCode = h.epochCode(p.epoch); rp.ErrorCode == 0 {
			hw, logStart, leo := l.state()
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, hw, logStart
			if p.offset < logStart || p.offset > leo {
				rp.ErrorCode = kerr.OffsetOutOfRange.Code
			} else {
				rp.RecordBatches = l.read(p.offset, p.maxBytes)
			}
		}
		if rp.ErrorCode != 0 {
			n++
		}
		n += len(rp.RecordBatches)
		if sess != nil && req.SessionEpoch > 0 && rp.ErrorCode == 0 && len(rp.RecordBatches) == 0 && rp.HighWatermark == p.sentHW {
			continue
		}
		p.sentHW = rp.HighWatermark
		if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != p.tp.Topic {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic = p.tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return resp, n
}

func (h *fakeLeader) stats() (asked []int32, fenced, maxParts, badReplica int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int32(nil), h.askedEpochs...), h.fenced, h.maxParts, h.badReplica
}

// clientConns is the connection each client id was last seen on.
func (h *fakeLeader) clientConns() map[string]*server.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.clients)
}

func (h *fakeLeader) setEpoch(e int32) {
	h.mu.Lock()
	h.epoch = e
	h.mu.Unlock()
}

// addrBook is a mutable BrokerAddr.
type addrBook struct {
	mu    sync.Mutex
	addrs map[int32]string
}

func (b *addrBook) set(id int32, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[int32]string{}
	}
	b.addrs[id] = addr
}

// serveAsBroker1 serves h (stopped at cleanup) and returns an address book
// naming it broker 1.
func serveAsBroker1(t *testing.T, h *fakeLeader) *addrBook {
	t.Helper()
	addr, _ := h.serve(t)
	book := &addrBook{}
	book.set(1, addr)
	return book
}

func (b *addrBook) lookup(id int32) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.addrs[id]
	return a, ok
}

// syncBuffer collects logs from the fetcher goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTestManager returns a manager with short waits resolving through book,
// logging into logs, closed at cleanup.
func newTestManager(t *testing.T, book *addrBook, logs *syncBuffer, maxBytes int32) *Manager {
	t.Helper()
	m := NewManager(Config{
		NodeID:     followerID,
		BrokerAddr: book.lookup,
		MaxBytes:   maxBytes,
		MaxWait:    50 * time.Millisecond,
		Backoff:    20 * time.Millisecond,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(m.Close)
	return m
}

// waitFor polls cond; the deadline only guards against hangs.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// caughtUp reports whether follower holds exactly leader's bytes and hw.
func caughtUp(follower, leader *fakeLog) bool {
	fhw, _, _ := follower.state()
	lhw, _, _ := leader.state()
	return bytes.Equal(follower.bytes(), leader.bytes()) && fhw == lhw
}

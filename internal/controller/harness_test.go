package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

// recSender records what a controller sends; nothing is delivered.
type recSender struct {
	mu      sync.Mutex
	brokers map[int32]bool
	sent    []sent
}

type sent struct {
	broker int32
	req    kmsg.Request
}

func newRecSender() *recSender { return &recSender{brokers: map[int32]bool{}} }

func (s *recSender) AddBroker(b metadata.Broker) { s.mu.Lock(); s.brokers[b.ID] = true; s.mu.Unlock() }
func (s *recSender) RemoveBroker(id int32)       { s.mu.Lock(); delete(s.brokers, id); s.mu.Unlock() }
func (s *recSender) Send(b int32, req kmsg.Request, _ func(kmsg.Response, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.brokers[b] {
		s.sent = append(s.sent, sent{b, req})
	}
}

// take returns and forgets what was sent.
func (s *recSender) take() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sent
	s.sent = nil
	return out
}

// node is one broker of a scenario: its own store client and session, a
// registration, and a controller driven by hand.
type node struct {
	id     int32
	client *memstore.Client
	sess   metastore.Session
	c      *Controller
	sender *recSender
}

type cluster struct {
	t     testing.TB
	store *memstore.Store
	nodes map[int32]*node
	ctx   context.Context
}

func newCluster(t testing.TB, ids ...int32) *cluster {
	cl := &cluster{t: t, store: memstore.New(memstore.WithMaxTxnOps(16)), nodes: map[int32]*node{}, ctx: context.Background()}
	for _, id := range ids {
		cl.start(id)
	}
	return cl
}

// start registers broker id with a fresh client and session.
func (cl *cluster) start(id int32) *node {
	cl.t.Helper()
	c := cl.store.NewClient()
	sess, err := c.NewSession(cl.ctx, 6*time.Second)
	if err != nil {
		cl.t.Fatal(err)
	}
	if _, err := metadata.New(c).RegisterBroker(cl.ctx, sess, metadata.NewBroker(id, "127.0.0.1", 9092+id, "", time.Unix(0, 0))); err != nil {
		cl.t.Fatal(err)
	}
	s := newRecSender()
	n := &node{id: id, client: c, sess: sess, sender: s,
		c: New(Config{NodeID: id, Store: c, Sender: s, Now: func() time.Time { return time.Unix(1000, 0) }})}
	cl.nodes[id] = n
	return n
}

// kill ends a broker's session (its registration and /controller vanish).
func (cl *cluster) kill(id int32) {
	n := cl.nodes[id]
	cl.store.ExpireSession(n.sess.ID())
	delete(cl.nodes, id)
}

func (cl *cluster) handle(id int32, ev Event) { cl.nodes[id].c.Handle(cl.ctx, ev) }

// broadcast delivers ev to every node in id order.
func (cl *cluster) broadcast(ev Event) {
	for _, id := range cl.ids() {
		cl.handle(id, ev)
	}
}

func (cl *cluster) ids() []int32 {
	var ids []int32
	for id := range cl.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (cl *cluster) startupAll() {
	for _, id := range cl.ids() {
		cl.handle(id, Startup{Session: cl.nodes[id].sess})
	}
}

func (cl *cluster) active() []int32 {
	var out []int32
	for _, id := range cl.ids() {
		if cl.nodes[id].c.IsActive() {
			out = append(out, id)
		}
	}
	return out
}

// createTopic writes an assignment the way the admin path does and tells
// every controller about it.
func (cl *cluster) createTopic(name string, assignment map[int32][]int32) {
	cl.t.Helper()
	var id metadata.TopicID
	copy(id[:], fmt.Sprintf("%-16s", name))
	if err := metadata.New(cl.store).CreateTopic(cl.ctx, name, metadata.Assignment{TopicID: id, Partitions: assignment}, nil); err != nil {
		cl.t.Fatal(err)
	}
	kv, _, _ := cl.store.Get(cl.ctx, metadata.TopicKey(name))
	cl.broadcast(TopicChange{KVs: []metastore.KV{kv}})
}

func (cl *cluster) state(topic string, p int32) metadata.LeaderAndIsr {
	cl.t.Helper()
	s, found, err := metadata.New(cl.store).ReadState(cl.ctx, TP{Topic: topic, Partition: p})
	if err != nil || !found {
		cl.t.Fatalf("no state for %s-%d: %v", topic, p, err)
	}
	return s
}

func (cl *cluster) epoch() int32 {
	kv, _, _ := cl.store.Get(cl.ctx, metadata.ControllerEpochKey)
	var e int32
	fmt.Sscan(string(kv.Value), &e)
	return e
}

// byKind groups sent requests: broker → API name → count.
func byKind(ss []sent) map[int32]map[string]int {
	m := map[int32]map[string]int{}
	for _, s := range ss {
		if m[s.broker] == nil {
			m[s.broker] = map[string]int{}
		}
		m[s.broker][kmsg.NameForKey(s.req.Key())]++
	}
	return m
}

// sentSoFar returns what was sent, keeping it.
func (s *recSender) sentSoFar() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sent(nil), s.sent...)
}

// runLoop runs controller id's loop until the test ends, and returns it with
// a context bounding each wait for its answers.
func (cl *cluster) runLoop(id int32) (*Loop, context.Context) {
	l := NewLoop(cl.nodes[id].c)
	ctx, stop := context.WithCancel(cl.ctx)
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	wait, cancelWait := context.WithTimeout(cl.ctx, 30*time.Second)
	cl.t.Cleanup(func() { cancelWait(); stop(); <-done })
	return l, wait
}

// endedContext returns a context already cancelled.
func (cl *cluster) endedContext() context.Context {
	ctx, cancel := context.WithCancel(cl.ctx)
	cancel()
	return ctx
}

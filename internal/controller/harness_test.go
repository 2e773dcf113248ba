package controller

// The cluster harness: brokers sharing one in-memory store, each with its
// own client, session, registration and controller, driven on the test's
// goroutine. Store changes reach a controller exactly as in production:
// its Loop's first read of the store (a snapshot) and its watch's
// responses are queued on its Loop and handed over by the Loop's own
// drain, consecutive changes merged. Only the goroutines differ: settle
// reads each watch up to the store's revision and drains the queue on the
// test's goroutine, so that every run does the same.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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

// sentSoFar returns what was sent, keeping it.
func (s *recSender) sentSoFar() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sent(nil), s.sent...)
}

// nodeStore is a node's store client whose next transactions can be
// preceded by something else: a write racing the controller's (its watch
// has not brought it yet when the controller writes), or a failure.
type nodeStore struct {
	*memstore.Client
	mu     sync.Mutex
	before []func() error // one per coming transaction; an error fails it
}

// beforeTxns arms fs, one for each of the node's next transactions.
func (s *nodeStore) beforeTxns(fs ...func() error) {
	s.mu.Lock()
	s.before = append(s.before, fs...)
	s.mu.Unlock()
}

func (s *nodeStore) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	s.mu.Lock()
	var f func() error
	if len(s.before) > 0 {
		f, s.before = s.before[0], s.before[1:]
	}
	s.mu.Unlock()
	if f != nil {
		if err := f(); err != nil {
			return metastore.TxnResult{}, err
		}
	}
	return s.Client.Txn(ctx, cmps, ops)
}

// node is one broker of a scenario: its own store client and session, a
// registration, and a controller with its Loop, driven by the harness.
type node struct {
	id     int32
	client *nodeStore
	sess   metastore.Session
	c      *Controller
	loop   *Loop
	sender *recSender

	watch   <-chan metastore.WatchResponse // nil until the node first follows the store
	seen    int64                          // the last revision queued on its loop
	stop    context.CancelFunc             // ends its watch
	stalled bool                           // its loop takes nothing (stall/wake)
	running bool                           // its Loop runs on its own goroutine (runLoop)
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

// start registers broker id with a fresh client and session. Its
// controller has not campaigned yet, nor read the store.
func (cl *cluster) start(id int32) *node {
	cl.t.Helper()
	c := &nodeStore{Client: cl.store.NewClient()}
	sess, err := c.NewSession(cl.ctx, 6*time.Second)
	if err != nil {
		cl.t.Fatal(err)
	}
	if _, err := metadata.New(c).RegisterBroker(cl.ctx, sess, testRegistration(id)); err != nil {
		cl.t.Fatal(err)
	}
	s := newRecSender()
	ctrl := New(Config{NodeID: id, Store: c, Sender: s, Now: func() time.Time { return time.Unix(1000, 0) }})
	n := &node{id: id, client: c, sess: sess, sender: s, c: ctrl, loop: NewLoop(ctrl), stop: func() {}}
	ctrl.mirroring = true // as Loop.Run sets it: the loop feeds store changes
	cl.nodes[id] = n
	cl.t.Cleanup(func() { n.stop() })
	return n
}

// testRegistration is broker id's registration: its inter-broker listener
// (PLAINTEXT, the controller's default) and a client listener.
func testRegistration(id int32) metadata.Broker {
	return metadata.NewBroker(id, []metadata.Endpoint{
		{Listener: "EXTERNAL", Host: fmt.Sprintf("kafka-%d.example.com", id), Port: 19092, Protocol: "PLAINTEXT"},
		{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9092 + id, Protocol: "PLAINTEXT"},
	}, "", time.Unix(0, 0))
}

// kill ends a broker's session (its registration and /controller vanish)
// and stops its loop. Nobody has handled the change yet: settle.
func (cl *cluster) kill(id int32) {
	cl.t.Helper()
	n := cl.nodes[id]
	cl.expire(n)
	n.stop()
	delete(cl.nodes, id)
}

// expire ends n's store session, as a lease expiry does.
func (cl *cluster) expire(n *node) {
	cl.t.Helper()
	if !cl.store.ExpireSession(n.sess.ID()) {
		cl.t.Fatalf("broker %d: session %d not alive", n.id, n.sess.ID())
	}
}

// handle hands node id one event directly, as its loop would; API
// requests (AlterPartition, ElectLeaders, …) come this way.
func (cl *cluster) handle(id int32, ev Event) { cl.nodes[id].c.Handle(cl.ctx, ev) }

// settle lets every node's loop take what its watch has brought and
// handle it, in id order, until no node has anything left: the cluster
// has acted on every store change.
func (cl *cluster) settle() {
	cl.t.Helper()
	for rounds := 0; ; rounds++ {
		if rounds == 100 {
			cl.t.Fatal("the controllers keep writing to the store")
		}
		busy := false
		for _, id := range cl.ids() {
			busy = cl.deliver(id) || busy
		}
		if !busy {
			return
		}
	}
}

// deliver has node id's loop take what its watch brought (feed) and
// handle it (drain). It reports whether the node had anything to handle.
func (cl *cluster) deliver(id int32) bool {
	cl.t.Helper()
	n := cl.nodes[id]
	if n.stalled || n.running {
		return false
	}
	cl.feed(id)
	return cl.drain(id)
}

// feed queues on node id's loop what follow would have queued by now: at
// first the snapshot of the store, then every watch response up to the
// store's revision.
func (cl *cluster) feed(id int32) {
	cl.t.Helper()
	n := cl.nodes[id]
	target := cl.store.Revision()
	if n.watch == nil {
		ctx, stop := context.WithCancel(cl.ctx)
		snapshot, watch, err := n.loop.startFollowing(ctx)
		if err != nil {
			stop()
			cl.t.Fatalf("broker %d follows the store: %v", id, err)
		}
		n.watch, n.stop, n.seen = watch, stop, snapshot.revision
		n.loop.Enqueue(snapshot)
	}
	for n.seen < target {
		select {
		case resp := <-n.watch:
			if resp.Err != nil {
				cl.t.Fatalf("broker %d's watch: %v", id, resp.Err)
			}
			n.loop.Enqueue(changeOf(resp))
			n.seen = resp.Revision
		case <-time.After(10 * time.Second):
			cl.t.Fatalf("broker %d's watch stopped at revision %d of %d", id, n.seen, target)
		}
	}
}

// drain hands node id's queued events to its controller as Run does,
// decoding the warm state chunks as its warmDecoder would, one decodeWarm
// queued at a time, without the wait. It reports whether there was any.
func (cl *cluster) drain(id int32) bool {
	n := cl.nodes[id]
	handled, decodeQueued := false, false
	n.loop.drain(cl.ctx, func(ev Event) {
		handled = true
		if _, ok := ev.(decodeWarm); ok {
			decodeQueued = false
		}
		if !decodeQueued && n.c.warmPending() {
			decodeQueued = true
			n.loop.Enqueue(decodeWarm{})
		}
	})
	return handled
}

func (cl *cluster) ids() []int32 {
	var ids []int32
	for id := range cl.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// startupAll has every broker campaign, in id order, then settles.
func (cl *cluster) startupAll() {
	for _, id := range cl.ids() {
		cl.handle(id, Startup{Session: cl.nodes[id].sess})
	}
	cl.settle()
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

// createTopic writes an assignment the way the admin path does; the
// controllers learn of it through their watches (settle).
func (cl *cluster) createTopic(name string, assignment map[int32][]int32) {
	cl.t.Helper()
	var id metadata.TopicID
	copy(id[:], fmt.Sprintf("%-16s", name))
	if err := metadata.New(cl.store).CreateTopic(cl.ctx, name, metadata.Assignment{TopicID: id, Partitions: assignment}, nil); err != nil {
		cl.t.Fatal(err)
	}
	cl.settle()
}

// markForDeletion writes the deletion marker as the DeleteTopics handler
// does, and settles.
func (cl *cluster) markForDeletion(topic string) {
	cl.t.Helper()
	if err := metadata.New(cl.store).MarkTopicForDeletion(cl.ctx, topic); err != nil {
		cl.t.Fatal(err)
	}
	cl.settle()
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
	cl.t.Helper()
	kv, found, err := cl.store.Get(cl.ctx, metadata.ControllerEpochKey)
	if err != nil || !found {
		cl.t.Fatalf("no controller epoch: %v", err)
	}
	e, err := strconv.ParseInt(string(kv.Value), 10, 32)
	if err != nil {
		cl.t.Fatalf("controller epoch %q: %v", kv.Value, err)
	}
	return int32(e)
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

// runLoop runs controller id's loop on its own goroutine until the test
// ends (settle leaves the node alone from then on), and returns it with a
// context bounding each wait for its answers.
func (cl *cluster) runLoop(id int32) (*Loop, context.Context) {
	n := cl.nodes[id]
	n.running = true
	n.c.enqueue = n.loop.Enqueue // a test's other loops of the same controller took it
	ctx, stop := context.WithCancel(cl.ctx)
	done := make(chan struct{})
	go func() { n.loop.Run(ctx); close(done) }()
	wait, cancelWait := context.WithTimeout(cl.ctx, 30*time.Second)
	cl.t.Cleanup(func() { cancelWait(); stop(); <-done })
	return n.loop, wait
}

// runLoops runs every broker's loop on its own goroutine until the test
// ends, each campaigning at once, and returns a context for the test's
// store calls.
func (cl *cluster) runLoops() context.Context {
	var ctx context.Context
	for _, id := range cl.ids() {
		l, wait := cl.runLoop(id)
		l.Enqueue(Startup{Session: cl.nodes[id].sess})
		ctx = wait
	}
	return ctx
}

// endedContext returns a context already cancelled.
func (cl *cluster) endedContext() context.Context {
	ctx, cancel := context.WithCancel(cl.ctx)
	cancel()
	return ctx
}

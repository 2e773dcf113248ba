// Package alterpartition is the broker side of KIP-497 (Kafka's
// DefaultAlterPartitionManager): partition leaders submit ISR changes, which
// are sent in batches to the active controller as AlterPartition requests.
//
// At most one item per partition is outstanding (queued or in flight). A
// second Submit for that partition waits behind it and is sent once it is
// answered; a third replaces the waiting one, which is answered
// OPERATION_NOT_ATTEMPTED. Kafka refuses the second at once, and its leader
// proposes again at its next fetch of the partition, which follows every
// follower fetch. A Samsa leader reads a partition of an incremental fetch
// session only when the follower names it or at the session's sweep, so a
// refused expansion of an idle partition (a leader's first proposal at a
// new epoch, behind one of the old epoch the controller has not answered)
// would wait for that sweep. One goroutine sends one
// request at a time, carrying every item queued when it is built — items
// submitted meanwhile go in the next one, sent as soon as the answer
// arrives. Version 2 (topic ids) is used when every item has a topic id,
// else version 1 (names).
//
// No known controller, a connection error, or a top-level error in the
// answer (NOT_CONTROLLER, STALE_BROKER_EPOCH, ...) keeps the items queued
// and retries with backoff, asking Config.Controller and Config.BrokerEpoch
// again each time: a moved controller is found at its new address. A
// partition the answer leaves out is sent again. Every other outcome is the
// partition's Result, given to its done func (from the sender goroutine,
// without locks held; done may Submit again).
//
// done is called exactly once per Submit: Close answers the items still
// outstanding, and any Submit after it, with OPERATION_NOT_ATTEMPTED.
package alterpartition

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Item is one proposed ISR change: the leader's view of the partition
// (leader epoch, partition epoch) and the ISR it wants.
type Item struct {
	TP             kafka.TopicPartition
	TopicID        [16]byte // zero: unknown (version 1, by name)
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []int32
}

// Result is the controller's answer for one item: an error code, or the
// partition's state after the change.
type Result struct {
	ErrorCode      int16
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

// Config is what a Manager needs. Zero durations take the defaults.
type Config struct {
	NodeID      int32
	BrokerEpoch func() int64
	// Controller is the active controller as this broker knows it.
	Controller func() (id int32, addr string, ok bool)
	Logger     *slog.Logger
	Backoff    time.Duration // first retry delay (50ms), doubling up to MaxBackoff
	MaxBackoff time.Duration // (1s)
	Timeout    time.Duration // per request (30s, controller.socket.timeout.ms)
}

// Manager batches ISR changes to the controller. See the package doc.
type Manager struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}
	signal chan struct{}

	mu          sync.Mutex
	outstanding map[kafka.TopicPartition]*entry // queued or in flight
	closed      bool

	// Owned by the sender goroutine.
	addr   string
	client *kgo.Client
}

type entry struct {
	item Item
	done func(Result)
	next *entry // the partition's item submitted while this one is outstanding
}

// New starts a Manager.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.Backoff {
		cfg.MaxBackoff = max(cfg.Backoff, time.Second)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, cancel: cancel, done: make(chan struct{}), signal: make(chan struct{}, 1),
		outstanding: map[kafka.TopicPartition]*entry{}}
	go m.run(ctx)
	return m
}

// Submit queues item; done gets its Result. For a partition with an item
// outstanding, item waits behind it, answering any item that waited there
// before with OPERATION_NOT_ATTEMPTED. A closed Manager answers
// OPERATION_NOT_ATTEMPTED at once. Those answers are given on the caller's
// goroutine.
func (m *Manager) Submit(item Item, done func(Result)) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		done(Result{ErrorCode: kerr.OperationNotAttempted.Code})
		return
	}
	item.NewISR = slices.Clone(item.NewISR)
	e := &entry{item: item, done: done}
	if cur := m.outstanding[item.TP]; cur != nil {
		replaced := cur.next
		cur.next = e
		m.mu.Unlock()
		if replaced != nil {
			replaced.done(Result{ErrorCode: kerr.OperationNotAttempted.Code})
		}
		return // sent once cur is answered
	}
	m.outstanding[item.TP] = e
	m.mu.Unlock()
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// Close stops sending and answers what is outstanding.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	<-m.done
	if m.client != nil {
		m.client.Close()
	}
	m.mu.Lock()
	left := m.outstanding
	m.outstanding = map[kafka.TopicPartition]*entry{}
	m.mu.Unlock()
	for _, e := range sortedEntries(left) {
		e.done(Result{ErrorCode: kerr.OperationNotAttempted.Code})
		if e.next != nil {
			e.next.done(Result{ErrorCode: kerr.OperationNotAttempted.Code})
		}
	}
}

// run sends until ctx ends: whenever items are outstanding, one request at
// a time.
func (m *Manager) run(ctx context.Context) {
	defer close(m.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.signal:
		}
		backoff := m.cfg.Backoff
		for {
			m.mu.Lock()
			batch := sortedEntries(m.outstanding)
			m.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			if m.send(ctx, batch) {
				backoff = m.cfg.Backoff
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, m.cfg.MaxBackoff)
		}
	}
}

func sortedEntries(m map[kafka.TopicPartition]*entry) []*entry {
	out := make([]*entry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *entry) int {
		if a.item.TP.Topic != b.item.TP.Topic {
			if a.item.TP.Topic < b.item.TP.Topic {
				return -1
			}
			return 1
		}
		return int(a.item.TP.Partition) - int(b.item.TP.Partition)
	})
	return out
}

package controller

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// ChannelManager is the real Sender: one connection and one ordered send
// queue per live broker (Kafka's ControllerChannelManager). A request is
// retried with backoff until it is answered or its broker is removed.
type ChannelManager struct {
	log     *slog.Logger
	timeout time.Duration

	mu      sync.Mutex
	brokers map[int32]*brokerChannel
}

type pending struct {
	req kmsg.Request
	cb  func(kmsg.Response, error)
}

type brokerChannel struct {
	id     int32
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	queue  []pending
	signal chan struct{}
}

// NewChannelManager returns a manager whose requests time out after
// timeout (controller.socket.timeout.ms).
func NewChannelManager(log *slog.Logger, timeout time.Duration) *ChannelManager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ChannelManager{log: log, timeout: timeout, brokers: map[int32]*brokerChannel{}}
}

// AddBroker opens a channel to b (replacing an older one).
func (m *ChannelManager) AddBroker(b metadata.Broker) {
	m.RemoveBroker(b.ID)
	cl, err := kgo.NewClient(kgo.SeedBrokers(net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))),
		kgo.RequestRetries(0), kgo.RequestTimeoutOverhead(m.timeout))
	if err != nil {
		m.log.Error("controller channel", "broker", b.ID, "err", err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := &brokerChannel{id: b.ID, cl: cl, cancel: cancel, done: make(chan struct{}), signal: make(chan struct{}, 1)}
	m.mu.Lock()
	m.brokers[b.ID] = ch
	m.mu.Unlock()
	go m.run(ctx, ch)
}

// RemoveBroker closes the channel to id; queued requests are dropped.
func (m *ChannelManager) RemoveBroker(id int32) {
	m.mu.Lock()
	ch := m.brokers[id]
	delete(m.brokers, id)
	m.mu.Unlock()
	if ch != nil {
		ch.cancel()
		<-ch.done
		ch.cl.Close()
	}
}

// Close removes every broker.
func (m *ChannelManager) Close() {
	m.mu.Lock()
	ids := make([]int32, 0, len(m.brokers))
	for id := range m.brokers {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		m.RemoveBroker(id)
	}
}

// Send queues req for broker; cb gets the answer. Unknown brokers drop it.
func (m *ChannelManager) Send(broker int32, req kmsg.Request, cb func(kmsg.Response, error)) {
	m.mu.Lock()
	ch := m.brokers[broker]
	m.mu.Unlock()
	if ch == nil {
		return
	}
	ch.mu.Lock()
	ch.queue = append(ch.queue, pending{req, cb})
	ch.mu.Unlock()
	select {
	case ch.signal <- struct{}{}:
	default:
	}
}

func (m *ChannelManager) run(ctx context.Context, ch *brokerChannel) {
	defer close(ch.done)
	for {
		ch.mu.Lock()
		if len(ch.queue) == 0 {
			ch.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-ch.signal:
				continue
			}
		}
		p := ch.queue[0]
		ch.queue = ch.queue[1:]
		ch.mu.Unlock()
		for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
			rctx, cancel := context.WithTimeout(ctx, m.timeout)
			resp, err := ch.cl.SeedBrokers()[0].Request(rctx, p.req)
			cancel()
			if err == nil {
				p.cb(resp, nil)
				break
			}
			if ctx.Err() != nil {
				return
			}
			m.log.Debug("controller request to broker failed; retrying", "broker", ch.id, "api", kmsg.NameForKey(p.req.Key()), "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
	}
}

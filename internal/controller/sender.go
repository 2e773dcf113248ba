package controller

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/wire"
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
	addr   string
	conn   *wire.Conn // owned by the channel's goroutine; nil until dialled
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
	ctx, cancel := context.WithCancel(context.Background())
	ch := &brokerChannel{id: b.ID, addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))),
		cancel: cancel, done: make(chan struct{}), signal: make(chan struct{}, 1)}
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
	defer ch.drop()
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
			resp, err := ch.roundTrip(ctx, p.req, m.timeout)
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

// roundTrip sends req on the channel's connection, dialling it first if
// needed; a failed request drops the connection.
func (ch *brokerChannel) roundTrip(ctx context.Context, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	if ch.conn == nil {
		c, err := wire.Dial(ctx, ch.addr, "samsa-controller", timeout)
		if err != nil {
			return nil, err
		}
		ch.conn = c
	}
	resp := req.ResponseKind()
	if err := ch.conn.RoundTrip(req, resp, timeout); err != nil {
		ch.drop()
		return nil, err
	}
	return resp, nil
}

func (ch *brokerChannel) drop() {
	if ch.conn != nil {
		ch.conn.Close()
		ch.conn = nil
	}
}

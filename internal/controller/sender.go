package controller

import (
	"context"
	"errors"
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
//
// Unlike Kafka's RequestSendThread, which waits for each answer before
// sending the next request, a channel sends its queued requests without
// waiting (at most maxInFlight unanswered). The broker handles a
// connection's requests one at a time in arrival order, as Kafka's does,
// so they still take effect in the order sent (a LeaderAndIsr before the
// UpdateMetadata that follows it); what changes is that the broker reads
// and decodes the next request while it applies the previous one, and no
// round trip separates them. Answers come back in order, each to its
// request's callback. When the connection breaks, the unanswered requests
// are sent again, in order, on a new one.
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

// maxInFlight bounds a channel's requests sent and not yet answered: a
// LeaderAndIsr and the UpdateMetadata after it, so that the broker decodes
// the one while it applies the other. At 8, a broker also decoded the next
// batch while applying the first and took cores from it: at 100k
// partitions on two cores, a controlled shutdown's caches showed the new
// leaders later than without pipelining.
const maxInFlight = 2

func (m *ChannelManager) run(ctx context.Context, ch *brokerChannel) {
	defer close(ch.done)
	var unanswered []pending // sent on a connection that broke: sent first on the next
	const firstBackoff = 50 * time.Millisecond
	for backoff := firstBackoff; ; backoff = min(2*backoff, 2*time.Second) {
		var answered bool
		var err error
		if unanswered, answered, err = m.serve(ctx, ch, unanswered); ctx.Err() != nil {
			return
		}
		if answered { // the connection worked: a new failure backs off from the start
			backoff = firstBackoff
		}
		m.log.Debug("controller requests to broker failed; retrying", "broker", ch.id, "unanswered", len(unanswered), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// serve dials ch's broker and sends, in order, first resend and then what
// is queued, while a second goroutine reads the answers and calls the
// callbacks. It returns when the connection fails or ctx ends, with the
// requests sent and not answered, oldest first, and whether any request was
// answered.
func (m *ChannelManager) serve(ctx context.Context, ch *brokerChannel, resend []pending) (left []pending, answered bool, err error) {
	conn, err := wire.Dial(ctx, ch.addr, "samsa-controller", m.timeout)
	if err != nil {
		return resend, false, err
	}
	defer conn.Close()
	var (
		mu       sync.Mutex
		inFlight []pending // sent, not answered, oldest first
		space    = make(chan struct{}, 1)
		broken   = make(chan struct{})
		readErr  error
		answers  int
		reader   sync.WaitGroup
		sent     = make(chan struct{}, 1) // a request joined inFlight
		stopRead = make(chan struct{})
	)
	reader.Add(1)
	go func() { // the answers, in order
		defer reader.Done()
		defer close(broken)
		for {
			mu.Lock()
			for len(inFlight) == 0 {
				mu.Unlock()
				select {
				case <-sent:
				case <-stopRead:
					return
				}
				mu.Lock()
			}
			p := inFlight[0]
			mu.Unlock()
			resp := p.req.ResponseKind()
			if err := conn.Receive(p.req, resp, m.timeout); err != nil {
				readErr = err
				conn.Close() // a write in progress fails at once
				return
			}
			mu.Lock()
			inFlight = inFlight[1:]
			answers++
			mu.Unlock()
			select {
			case space <- struct{}{}:
			default:
			}
			p.cb(resp, nil)
		}
	}()
	// finish stops the reader and returns what is left unanswered: the
	// connection is closed first, so a read in progress fails at once.
	finish := func(err error) ([]pending, bool, error) {
		conn.Close()
		close(stopRead)
		reader.Wait()
		if readErr != nil {
			err = readErr
		}
		return inFlight, answers > 0, err
	}
	// send writes p once fewer than maxInFlight await their answers. p
	// joins inFlight first, so that the reader, which reads answers in
	// inFlight's order, waits for it, and so that it is sent again on the
	// next connection if this one fails, written or not.
	send := func(p pending) error {
		for {
			mu.Lock()
			if len(inFlight) < maxInFlight {
				inFlight = append(inFlight, p)
				mu.Unlock()
				break
			}
			mu.Unlock()
			var err error
			select {
			case <-space:
				continue
			case <-broken:
				err = errBroken
			case <-ctx.Done():
				err = ctx.Err()
			}
			mu.Lock()
			inFlight = append(inFlight, p)
			mu.Unlock()
			return err
		}
		select {
		case sent <- struct{}{}:
		default:
		}
		return conn.Send(p.req, m.timeout)
	}
	for i, p := range resend {
		if err = send(p); err != nil {
			left, answered, err = finish(err)
			return append(left, resend[i+1:]...), answered, err
		}
	}
	for {
		ch.mu.Lock()
		if len(ch.queue) == 0 {
			ch.mu.Unlock()
			select {
			case <-ctx.Done():
				return finish(ctx.Err())
			case <-broken:
				return finish(errBroken)
			case <-ch.signal:
				continue
			}
		}
		p := ch.queue[0]
		ch.queue = ch.queue[1:]
		ch.mu.Unlock()
		if err := send(p); err != nil {
			return finish(err)
		}
	}
}

// errBroken: the connection failed while answers were awaited.
var errBroken = errors.New("controller: connection to broker broken")

package channel

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

// Manager is the controller's Sender: one connection and one ordered send
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
type Manager struct {
	log      *slog.Logger
	timeout  time.Duration
	listener string

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

// NewManager returns a manager that reaches brokers on their listener
// named listener (control.plane.listener.name, else
// inter.broker.listener.name) and whose requests time out after timeout
// (controller.socket.timeout.ms).
func NewManager(log *slog.Logger, timeout time.Duration, listener string) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{log: log, timeout: timeout, listener: listener, brokers: map[int32]*brokerChannel{}}
}

// AddBroker opens a channel to b (replacing an older one). A broker
// without the manager's listener gets none, its requests are dropped, and
// that is logged as an error (Kafka's controller fails to add it with
// BrokerEndPointNotAvailableException).
func (m *Manager) AddBroker(b metadata.Broker) {
	m.RemoveBroker(b.ID)
	ep, ok := b.Endpoint(m.listener)
	if !ok {
		m.log.Error("broker has no endpoint for the controller's listener: no controller requests will reach it",
			"broker", b.ID, "listener", m.listener, "endpoints", b.Endpoints)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := &brokerChannel{id: b.ID, addr: net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))),
		cancel: cancel, done: make(chan struct{}), signal: make(chan struct{}, 1)}
	m.mu.Lock()
	m.brokers[b.ID] = ch
	m.mu.Unlock()
	go m.run(ctx, ch)
}

// RemoveBroker closes the channel to id; queued requests are dropped.
func (m *Manager) RemoveBroker(id int32) {
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
func (m *Manager) Close() {
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
func (m *Manager) Send(broker int32, req kmsg.Request, cb func(kmsg.Response, error)) {
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
//
// Evidence (7d87ef1, real brokers, 100k partitions, 5 interleaved runs
// each): BenchmarkBrokerCrash 3.1-5.6 µs per led partition (median 4.3)
// one request at a time, 3.2-3.9 (median 3.4) pipelined at 2, ISRs
// without the dead broker 0.48-0.56 s → 0.39-0.49 s; BenchmarkControlledShutdown's
// caches showing the new leaders 0.41-0.49 s one at a time, 0.39-0.42 s
// at 2, 0.44-0.52 s at 8 (against 0.34-0.43 s in that pairing).
const maxInFlight = 2

func (m *Manager) run(ctx context.Context, ch *brokerChannel) {
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
func (m *Manager) serve(ctx context.Context, ch *brokerChannel, resend []pending) (left []pending, answered bool, err error) {
	conn, err := wire.Dial(ctx, ch.addr, "samsa-controller", m.timeout)
	if err != nil {
		return resend, false, err
	}
	c := newPipeline(conn, m.timeout)
	for i, p := range resend {
		if err := c.send(ctx, p); err != nil {
			left, answered, err = c.finish(err)
			return append(left, resend[i+1:]...), answered, err
		}
	}
	for {
		p, err := ch.next(ctx, c.broken)
		if err == nil {
			err = c.send(ctx, p)
		}
		if err != nil {
			return c.finish(err)
		}
	}
}

// next takes the oldest queued request, waiting for one until ctx ends or
// broken closes.
func (ch *brokerChannel) next(ctx context.Context, broken <-chan struct{}) (pending, error) {
	for {
		ch.mu.Lock()
		if len(ch.queue) > 0 {
			p := ch.queue[0]
			ch.queue = ch.queue[1:]
			ch.mu.Unlock()
			return p, nil
		}
		ch.mu.Unlock()
		select {
		case <-ctx.Done():
			return pending{}, ctx.Err()
		case <-broken:
			return pending{}, errBroken
		case <-ch.signal:
		}
	}
}

// pipeline is one connection of a channel: requests are written by the
// channel's goroutine (send) while its reader goroutine reads the answers
// in order (readAnswers), at most maxInFlight unanswered.
type pipeline struct {
	conn    *wire.Conn
	timeout time.Duration

	mu       sync.Mutex
	inFlight []pending // sent, not answered, oldest first
	answers  int
	readErr  error // set by the reader before it closes broken

	space    chan struct{} // an answer made room in inFlight
	sent     chan struct{} // a request joined inFlight
	broken   chan struct{} // closed when the reader stops
	stopRead chan struct{}
	reader   sync.WaitGroup
}

// newPipeline starts reading conn's answers.
func newPipeline(conn *wire.Conn, timeout time.Duration) *pipeline {
	c := &pipeline{conn: conn, timeout: timeout, space: make(chan struct{}, 1), sent: make(chan struct{}, 1),
		broken: make(chan struct{}), stopRead: make(chan struct{})}
	c.reader.Add(1)
	go c.readAnswers()
	return c
}

// readAnswers reads the answers in inFlight's order and hands each to its
// request's callback, until the connection fails or finish stops it.
func (c *pipeline) readAnswers() {
	defer c.reader.Done()
	defer close(c.broken)
	for {
		p, ok := c.oldest()
		if !ok {
			return
		}
		resp := p.req.ResponseKind()
		if err := c.conn.Receive(p.req, resp, c.timeout); err != nil {
			c.readErr = err
			c.conn.Close() // a write in progress fails at once
			return
		}
		c.mu.Lock()
		c.inFlight = c.inFlight[1:]
		c.answers++
		c.mu.Unlock()
		select {
		case c.space <- struct{}{}:
		default:
		}
		p.cb(resp, nil)
	}
}

// oldest waits for a request in flight and returns the oldest; false when
// finish stops the reader first.
func (c *pipeline) oldest() (pending, bool) {
	for {
		c.mu.Lock()
		if len(c.inFlight) > 0 {
			p := c.inFlight[0]
			c.mu.Unlock()
			return p, true
		}
		c.mu.Unlock()
		select {
		case <-c.sent:
		case <-c.stopRead:
			return pending{}, false
		}
	}
}

// send writes p once fewer than maxInFlight await their answers. p joins
// inFlight first, so that the reader, which reads answers in inFlight's
// order, waits for it, and so that it is sent again on the next
// connection if this one fails, written or not.
func (c *pipeline) send(ctx context.Context, p pending) error {
	err := c.waitForRoom(ctx)
	c.mu.Lock()
	c.inFlight = append(c.inFlight, p)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case c.sent <- struct{}{}:
	default:
	}
	return c.conn.Send(p.req, c.timeout)
}

// waitForRoom waits until fewer than maxInFlight requests await their
// answers. Only the channel's goroutine adds to inFlight, so the room
// stays.
func (c *pipeline) waitForRoom(ctx context.Context) error {
	for {
		c.mu.Lock()
		n := len(c.inFlight)
		c.mu.Unlock()
		if n < maxInFlight {
			return nil
		}
		select {
		case <-c.space:
		case <-c.broken:
			return errBroken
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finish stops the reader and returns what is left unanswered and whether
// anything was answered: the connection is closed first, so that a read
// in progress fails at once.
func (c *pipeline) finish(err error) ([]pending, bool, error) {
	c.conn.Close()
	close(c.stopRead)
	c.reader.Wait()
	if c.readErr != nil {
		err = c.readErr
	}
	return c.inFlight, c.answers > 0, err
}

// errBroken: the connection failed while answers were awaited.
var errBroken = errors.New("channel: connection to broker broken")

package producerid

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// Errors of Next.
var (
	// ErrNoBlock: the broker has no id left and its last claim of a block
	// failed (the store is unreachable); a claim is being retried.
	ErrNoBlock = errors.New("producerid: no producer id block")
	// ErrClosed: Run has ended.
	ErrClosed = errors.New("producerid: manager stopped")
)

// Config configures a Manager.
type Config struct {
	Broker int32
	Meta   *metadata.Client
	Logger *slog.Logger
	// StoreTimeout bounds one claim attempt and one read of the latest
	// block (default 5 s).
	StoreTimeout time.Duration
	// RefreshInterval is the least time between two reads of the latest
	// block by Issued (default 100 ms), so that a flood of produce
	// requests with made-up ids costs the store a few reads a second.
	RefreshInterval time.Duration
}

// Manager issues this broker's producer ids. Next and Issued are safe for
// concurrent use; Run must run for Next to get blocks.
type Manager struct {
	cfg  Config
	wake chan struct{} // a claim is due; buffered 1

	mu       sync.Mutex
	a        allocator
	changed  chan struct{} // closed and replaced when a claim attempt ends
	claimErr error         // the last claim attempt's error, nil after a success
	stopped  bool
	// highest is a.highest, published for Issued, which every idempotent
	// produce batch asks: it reads it without taking mu.
	highest atomic.Int64

	// Issued's reads of the store: one at a time (readMu), counted, so a
	// caller knows whether a read began after it asked.
	readMu   sync.Mutex
	reads    atomic.Int64
	lastRead time.Time
	readErr  error
}

// New returns a Manager; call Run to let it claim blocks.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = 5 * time.Second
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 100 * time.Millisecond
	}
	m := &Manager{cfg: cfg, wake: make(chan struct{}, 1), a: newAllocator(), changed: make(chan struct{})}
	m.highest.Store(m.a.highest)
	return m
}

// Run claims the first block at once (as Kafka's ZooKeeper-mode manager
// does when it starts), then each next block when Next asks for it,
// retrying failed claims with backoff, until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	defer func() {
		m.mu.Lock()
		m.stopped = true
		m.broadcastLocked()
		m.mu.Unlock()
	}()
	m.mu.Lock()
	first := m.a.startClaim()
	m.mu.Unlock()
	if first {
		m.signal()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
			m.claim(ctx)
		}
	}
}

// claim claims one block, retrying until it succeeds or ctx ends.
func (m *Manager) claim(ctx context.Context) {
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		cctx, cancel := context.WithTimeout(ctx, m.cfg.StoreTimeout)
		b, err := m.cfg.Meta.ClaimProducerIDBlock(cctx, m.cfg.Broker)
		cancel()
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		if err == nil {
			m.a.claimed(b)
			m.highest.Store(m.a.highest)
		}
		m.claimErr = err
		m.broadcastLocked()
		m.mu.Unlock()
		if err == nil {
			m.cfg.Logger.Info("claimed producer id block", "first", b.First, "last", b.Last)
			return
		}
		m.cfg.Logger.Warn("claiming a producer id block failed; retrying", "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

func (m *Manager) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *Manager) broadcastLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Next hands out a new producer id. It returns at once while the current
// block has ids left (asking Run for the next block when 90% of it is
// used); otherwise it waits for the claim under way, until ctx ends. If
// that claim failed it returns ErrNoBlock at once, wrapping the store's
// error, while Run retries.
func (m *Manager) Next(ctx context.Context) (int64, error) {
	for {
		m.mu.Lock()
		if m.stopped {
			m.mu.Unlock()
			return -1, ErrClosed
		}
		id, ok, claim := m.a.take()
		changed, claimErr := m.changed, m.claimErr
		m.mu.Unlock()
		if claim {
			m.signal()
		}
		if ok {
			return id, nil
		}
		if claimErr != nil {
			return -1, fmt.Errorf("%w: %w", ErrNoBlock, claimErr)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return -1, fmt.Errorf("producerid: waiting for a block: %w", ctx.Err())
		}
	}
}

// Issued reports whether id was ever handed out by some broker, as far as
// blocks go: whether it is at most the highest block end claimed. An id
// above the highest end this Manager knows of makes it read the latest
// block again (reads are one at a time, RefreshInterval apart, and a read
// that began after the call answers it), so an id another broker issued
// a moment ago is known. If that read fails Issued says true: the
// produce path does not depend on the store.
func (m *Manager) Issued(id int64) bool {
	if id < 0 {
		return false
	}
	if m.known(id) {
		return true
	}
	asked := m.reads.Load()
	m.readMu.Lock()
	defer m.readMu.Unlock()
	if m.reads.Load() == asked { // no read began since we asked
		if wait := m.cfg.RefreshInterval - time.Since(m.lastRead); wait > 0 {
			time.Sleep(wait)
		}
		m.reads.Add(1)
		m.readErr = m.refresh()
		m.lastRead = time.Now()
	}
	if m.readErr != nil {
		return true
	}
	return m.known(id)
}

func (m *Manager) known(id int64) bool { return issuedUpTo(m.highest.Load(), id) }

// refresh reads the latest block into the allocator.
func (m *Manager) refresh() error {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.StoreTimeout)
	defer cancel()
	b, found, err := m.cfg.Meta.LatestProducerIDBlock(ctx)
	if err != nil {
		m.cfg.Logger.Warn("reading the latest producer id block failed", "err", err)
		return err
	}
	if found {
		m.mu.Lock()
		m.a.saw(b.Last)
		m.highest.Store(m.a.highest)
		m.mu.Unlock()
	}
	return nil
}

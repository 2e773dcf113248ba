package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Client is one connection to a Store, as one broker's etcd client would
// be. Its fields are guarded by the store's mutex.
type Client struct {
	s        *Store
	closed   bool
	sessions map[*session]struct{}
	watchers map[*watcher]struct{}
}

var _ metastore.Store = (*Client)(nil)

// begin locks the store and checks the client is usable; on success the
// caller must unlock s.mu.
func (c *Client) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	c.s.mu.Lock()
	if c.closed || c.s.closed {
		c.s.mu.Unlock()
		return metastore.ErrClosed
	}
	return nil
}

// Get implements metastore.Store.
func (c *Client) Get(ctx context.Context, key string) (metastore.KV, bool, error) {
	if err := c.begin(ctx); err != nil {
		return metastore.KV{}, false, err
	}
	defer c.s.mu.Unlock()
	kv, ok := c.s.get(key)
	return kv, ok, nil
}

// List implements metastore.Store.
func (c *Client) List(ctx context.Context, prefix string) ([]metastore.KV, int64, error) {
	if err := c.begin(ctx); err != nil {
		return nil, 0, err
	}
	defer c.s.mu.Unlock()
	return c.s.list(prefix), c.s.rev, nil
}

// Txn implements metastore.Store.
func (c *Client) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	if err := c.s.checkTxn(cmps, ops); err != nil {
		return metastore.TxnResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return metastore.TxnResult{}, err
	}
	defer c.s.mu.Unlock()
	return c.s.txnLocked(cmps, ops)
}

// MaxTxnOps implements metastore.Store.
func (c *Client) MaxTxnOps() int { return c.s.maxOps }

// WatchKey implements metastore.Store.
func (c *Client) WatchKey(ctx context.Context, key string, fromRevision int64) <-chan metastore.WatchResponse {
	return c.watch(ctx, key, false, fromRevision)
}

// WatchPrefix implements metastore.Store.
func (c *Client) WatchPrefix(ctx context.Context, prefix string, fromRevision int64) <-chan metastore.WatchResponse {
	return c.watch(ctx, prefix, true, fromRevision)
}

// NewSession implements metastore.Store. The session lives until Close,
// ExpireSession, or its client's Close.
func (c *Client) NewSession(ctx context.Context, ttl time.Duration) (metastore.Session, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("memstore: session ttl %v must be positive", ttl)
	}
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	c.s.nextSession++
	ss := &session{
		s:      c.s,
		client: c,
		id:     metastore.SessionID(c.s.nextSession),
		ttl:    ttl,
		done:   make(chan struct{}),
		keys:   make(map[string]struct{}),
	}
	c.s.sessions[ss.id] = ss
	if c.sessions == nil {
		c.sessions = make(map[*session]struct{})
	}
	c.sessions[ss] = struct{}{}
	return ss, nil
}

// Close ends the client's sessions (their keys are deleted) and watches
// (they receive ErrClosed). The store stays usable by other clients.
func (c *Client) Close() error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.closeClientLocked(c)
	return nil
}

func (s *Store) closeClientLocked(c *Client) {
	if c.closed {
		return
	}
	c.closed = true
	delete(s.clients, c)
	for w := range c.watchers {
		s.endWatcherLocked(w, metastore.ErrClosed)
	}
	for ss := range c.sessions {
		s.endSessionLocked(ss)
	}
}

// session is a memstore session; its fields other than done are guarded by
// the store's mutex.
type session struct {
	s      *Store
	client *Client
	id     metastore.SessionID
	ttl    time.Duration
	done   chan struct{}
	keys   map[string]struct{}
}

func (ss *session) ID() metastore.SessionID { return ss.id }
func (ss *session) Done() <-chan struct{}   { return ss.done }

// Close ends the session; its keys vanish in one revision.
func (ss *session) Close() error {
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	if cur, ok := ss.s.sessions[ss.id]; ok && cur == ss {
		ss.s.endSessionLocked(ss)
	}
	return nil
}

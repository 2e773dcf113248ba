package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// DefaultMaxTxnOps is etcd's default --max-txn-ops.
const DefaultMaxTxnOps = 128

// ErrDuplicateKey is returned by Txn when two ops write the same key (etcd
// refuses such transactions too).
var ErrDuplicateKey = errors.New("memstore: duplicate key in one transaction")

// Option configures a Store.
type Option func(*Store)

// WithMaxTxnOps sets the most operations one Txn may carry (default 128).
func WithMaxTxnOps(n int) Option {
	return func(s *Store) {
		if n > 0 {
			s.maxOps = n
		}
	}
}

// Store is the shared in-memory state. It implements metastore.Store through
// a root client; NewClient gives further, independently closable clients.
type Store struct {
	mu          sync.Mutex
	maxOps      int
	rev         int64
	compactRev  int64
	keys        map[string]metastore.KV
	history     []change
	sessions    map[metastore.SessionID]*session
	nextSession int64
	watchers    map[*watcher]struct{}
	clients     map[*Client]struct{}
	closed      bool
	root        *Client
}

// change is one revision's events.
type change struct {
	rev    int64
	events []metastore.Event
}

var _ metastore.Store = (*Store)(nil)

// New returns an empty store at revision 1 (etcd's first revision).
func New(opts ...Option) *Store {
	s := &Store{
		maxOps:   DefaultMaxTxnOps,
		rev:      1,
		keys:     make(map[string]metastore.KV),
		sessions: make(map[metastore.SessionID]*session),
		watchers: make(map[*watcher]struct{}),
		clients:  make(map[*Client]struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.root = s.NewClient()
	return s
}

// NewClient returns a client of the store. Closing it ends its sessions
// (their keys are deleted at once, as if their leases expired) and its
// watches, but not the store.
func (s *Store) NewClient() *Client {
	c := &Client{s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.closed = true
	} else {
		s.clients[c] = struct{}{}
	}
	return c
}

// Get implements metastore.Store.
func (s *Store) Get(ctx context.Context, key string) (metastore.KV, bool, error) {
	return s.root.Get(ctx, key)
}

// List implements metastore.Store.
func (s *Store) List(ctx context.Context, prefix string) ([]metastore.KV, int64, error) {
	return s.root.List(ctx, prefix)
}

// Txn implements metastore.Store.
func (s *Store) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	return s.root.Txn(ctx, cmps, ops)
}

// MaxTxnOps implements metastore.Store.
func (s *Store) MaxTxnOps() int { return s.maxOps }

// WatchKey implements metastore.Store.
func (s *Store) WatchKey(ctx context.Context, key string, fromRevision int64) <-chan metastore.WatchResponse {
	return s.root.WatchKey(ctx, key, fromRevision)
}

// WatchPrefix implements metastore.Store.
func (s *Store) WatchPrefix(ctx context.Context, prefix string, fromRevision int64) <-chan metastore.WatchResponse {
	return s.root.WatchPrefix(ctx, prefix, fromRevision)
}

// NewSession implements metastore.Store.
func (s *Store) NewSession(ctx context.Context, ttl time.Duration) (metastore.Session, error) {
	return s.root.NewSession(ctx, ttl)
}

// Close closes every client and the store: sessions end, watches receive
// ErrClosed, and every later call fails with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	for c := range s.clients {
		s.closeClientLocked(c)
	}
	s.closed = true
	return nil
}

// Revision is the current store revision.
func (s *Store) Revision() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// Changes returns every change at revision fromRev or later that has not
// been compacted, in order. Each event's KV.Version is its revision.
func (s *Store) Changes(fromRev int64) []metastore.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metastore.Event
	for i := s.historyIndex(fromRev); i < len(s.history); i++ {
		for _, ev := range s.history[i].events {
			out = append(out, copyEvent(ev))
		}
	}
	return out
}

// Compact discards the history up to and including rev: a watch from a
// revision at or below it fails with metastore.ErrCompacted.
func (s *Store) Compact(rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case rev > s.rev:
		return fmt.Errorf("memstore: compact %d: revision is in the future (current %d)", rev, s.rev)
	case rev <= s.compactRev:
		return fmt.Errorf("memstore: compact %d: %w", rev, metastore.ErrCompacted)
	}
	s.compactRev = rev
	s.history = append([]change(nil), s.history[s.historyIndex(rev+1):]...)
	return nil
}

// ExpireSession ends session id as a lease expiry would: its keys are
// deleted in one revision and Done closes. It reports whether the session
// was alive.
func (s *Store) ExpireSession(id metastore.SessionID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[id]
	if !ok {
		return false
	}
	s.endSessionLocked(ss)
	return true
}

// historyIndex is the index of the first history entry at or after rev.
func (s *Store) historyIndex(rev int64) int {
	return sort.Search(len(s.history), func(i int) bool { return s.history[i].rev >= rev })
}

func (s *Store) get(key string) (metastore.KV, bool) {
	kv, ok := s.keys[key]
	if !ok {
		return metastore.KV{}, false
	}
	return copyKV(kv), true
}

func (s *Store) list(prefix string) []metastore.KV {
	var out []metastore.KV
	for k, kv := range s.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, copyKV(kv))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// checkTxn validates the shape of a transaction before anything is applied.
func (s *Store) checkTxn(cmps []metastore.Cmp, ops []metastore.Op) error {
	if n := len(cmps) + len(ops); n > s.maxOps {
		return fmt.Errorf("memstore: %d operations, at most %d: %w", n, s.maxOps, metastore.ErrTooManyOps)
	}
	seen := make(map[string]struct{}, len(ops))
	for _, op := range ops {
		if op.Type != metastore.OpPut && op.Type != metastore.OpDelete {
			return fmt.Errorf("memstore: unknown op type %d on key %q", op.Type, op.Key)
		}
		if op.Key == "" {
			return errors.New("memstore: empty key")
		}
		if _, dup := seen[op.Key]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicateKey, op.Key)
		}
		seen[op.Key] = struct{}{}
	}
	return nil
}

// txnLocked applies a transaction under s.mu.
func (s *Store) txnLocked(cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	for _, c := range cmps {
		if s.keys[c.Key].Version != c.Version {
			return metastore.TxnResult{Succeeded: false, Revision: s.rev}, nil
		}
	}
	for _, op := range ops {
		if op.Type == metastore.OpPut && op.Session != 0 {
			if _, ok := s.sessions[op.Session]; !ok {
				return metastore.TxnResult{}, fmt.Errorf("memstore: put %q bound to session %d: %w", op.Key, op.Session, metastore.ErrSessionExpired)
			}
		}
	}
	rev := s.rev + 1
	var events []metastore.Event
	for _, op := range ops {
		if ev, ok := s.applyLocked(op, rev); ok {
			events = append(events, ev)
		}
	}
	s.commitLocked(rev, events)
	return metastore.TxnResult{Succeeded: true, Revision: s.rev}, nil
}

// applyLocked applies one op at revision rev and returns its event, if the
// op changed anything.
func (s *Store) applyLocked(op metastore.Op, rev int64) (metastore.Event, bool) {
	old, exists := s.keys[op.Key]
	if exists && old.Session != 0 {
		if ss, ok := s.sessions[old.Session]; ok {
			delete(ss.keys, op.Key)
		}
	}
	if op.Type == metastore.OpDelete {
		if !exists {
			return metastore.Event{}, false
		}
		delete(s.keys, op.Key)
		return metastore.Event{Type: metastore.EventDelete, KV: metastore.KV{Key: op.Key, Version: rev}}, true
	}
	kv := metastore.KV{Key: op.Key, Value: bytes.Clone(op.Value), Version: rev, Created: rev, Session: op.Session}
	if kv.Value == nil {
		kv.Value = []byte{}
	}
	if exists {
		kv.Created = old.Created
	}
	s.keys[op.Key] = kv
	if op.Session != 0 {
		s.sessions[op.Session].keys[op.Key] = struct{}{}
	}
	return metastore.Event{Type: metastore.EventPut, KV: copyKV(kv)}, true
}

// commitLocked records the events of revision rev and pushes them to the
// watchers. A revision without events is not a revision.
func (s *Store) commitLocked(rev int64, events []metastore.Event) {
	if len(events) == 0 {
		return
	}
	s.rev = rev
	s.history = append(s.history, change{rev: rev, events: events})
	for w := range s.watchers {
		w.deliver(rev, events)
	}
}

// endSessionLocked deletes a session's keys in one revision and closes Done.
func (s *Store) endSessionLocked(ss *session) {
	delete(s.sessions, ss.id)
	delete(ss.client.sessions, ss)
	keys := make([]string, 0, len(ss.keys))
	for k := range ss.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rev := s.rev + 1
	var events []metastore.Event
	for _, k := range keys {
		if ev, ok := s.applyLocked(metastore.Delete(k), rev); ok {
			events = append(events, ev)
		}
	}
	s.commitLocked(rev, events)
	close(ss.done)
}

func copyKV(kv metastore.KV) metastore.KV {
	if kv.Value != nil {
		kv.Value = bytes.Clone(kv.Value)
	}
	return kv
}

func copyEvent(ev metastore.Event) metastore.Event {
	ev.KV = copyKV(ev.KV)
	return ev
}

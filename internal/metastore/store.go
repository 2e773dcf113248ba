// Package metastore is the coordination-store interface Samsa's metadata and
// controller sit on: exactly the four capabilities Kafka takes from
// ZooKeeper — keys bound to a session that vanish when it ends (ephemeral
// znodes), reads that return a version (zkVersion), conditional writes and
// multi-key transactions compared on those versions (multi), and watches on
// a key or a prefix that deliver every change in order.
//
// Backends: etcd (client v3; sessions are leases, versions are ModRevision,
// transactions are Txn) in etcdstore, an embedded etcd server in embedetcd,
// ZooKeeper (sessions are sessions, versions are zxids, transactions are
// multi; watches may coalesce a key's intermediate values) in zkstore, and
// an in-memory store (memstore) for unit tests of the layers above. One
// conformance suite (metastoretest) runs against every backend. Nothing
// above this interface may know which backend runs.
package metastore

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors, wrapped by backends.
var (
	ErrCompacted      = errors.New("metastore: revision compacted")
	ErrSessionExpired = errors.New("metastore: session expired")
	ErrClosed         = errors.New("metastore: store closed")
	ErrTooManyOps     = errors.New("metastore: too many operations in one transaction")
	// ErrUnavailable: the store gave no answer (no quorum, no connection,
	// a timeout). A write may or may not have been applied; trying it
	// again compares its versions again.
	ErrUnavailable = errors.New("metastore: store unavailable")
)

// SessionID identifies a session (an etcd lease id). 0 is no session.
type SessionID int64

// KV is one key as read.
type KV struct {
	Key   string
	Value []byte
	// Version is the store revision of the key's last write (etcd
	// ModRevision). Compares use it; it only grows.
	Version int64
	// Created is the store revision that created the key (etcd
	// CreateRevision); a broker's epoch is its registration's Created.
	Created int64
	// Session is the session the key is bound to, 0 if none.
	Session SessionID
}

// Session is a liveness lease. Keys written bound to it are deleted by the
// store when it ends: expiry (no keep-alive within its TTL), Close, or loss
// of the store.
type Session interface {
	ID() SessionID
	// Done is closed when the session has ended for any reason.
	Done() <-chan struct{}
	// Close ends the session now; its keys vanish.
	Close() error
}

// Cmp is a transaction guard: the key's Version must equal Version, where 0
// means the key must not exist.
type Cmp struct {
	Key     string
	Version int64
}

// OpType says what an Op does.
type OpType int8

const (
	OpPut OpType = iota + 1
	OpDelete
)

// Op is one write of a transaction.
type Op struct {
	Type    OpType
	Key     string
	Value   []byte
	Session SessionID // OpPut: bind the key to this session (0: unbound)
}

// Put writes key unbound.
func Put(key string, value []byte) Op { return Op{Type: OpPut, Key: key, Value: value} }

// PutBound writes key bound to session s.
func PutBound(key string, value []byte, s SessionID) Op {
	return Op{Type: OpPut, Key: key, Value: value, Session: s}
}

// Delete removes key (no error if absent).
func Delete(key string) Op { return Op{Type: OpDelete, Key: key} }

// TxnResult says whether every Cmp held (then every Op was applied
// atomically) and the store revision after the transaction.
type TxnResult struct {
	Succeeded bool
	Revision  int64
}

// EventType is the kind of a watched change.
type EventType int8

const (
	EventPut EventType = iota + 1
	EventDelete
)

// Event is one change. For deletes KV.Value is nil and KV.Version is the
// revision of the delete.
type Event struct {
	Type EventType
	KV   KV
}

// WatchResponse carries changes in revision order. A response with Err set
// is the last one; the channel closes after it (and when the watch's
// context ends).
type WatchResponse struct {
	Events   []Event
	Revision int64
	Err      error
}

// Store is a coordination store. All methods are safe for concurrent use.
type Store interface {
	// Get reads one key; found is false if it does not exist.
	Get(ctx context.Context, key string) (kv KV, found bool, err error)
	// List reads every key under prefix, sorted by key, at one revision,
	// which it returns (for watching from revision+1).
	List(ctx context.Context, prefix string) (kvs []KV, revision int64, err error)
	// Txn applies ops atomically if every cmp holds. More than MaxTxnOps
	// ops (cmps and ops counted together) is ErrTooManyOps: callers batch.
	Txn(ctx context.Context, cmps []Cmp, ops []Op) (TxnResult, error)
	// MaxTxnOps is the most operations one Txn may carry (etcd: 128).
	MaxTxnOps() int
	// WatchKey delivers every change to exactly key, from revision
	// fromRevision on (0: from now). ErrCompacted if fromRevision is gone.
	WatchKey(ctx context.Context, key string, fromRevision int64) <-chan WatchResponse
	// WatchPrefix is WatchKey for every key starting with prefix.
	WatchPrefix(ctx context.Context, prefix string, fromRevision int64) <-chan WatchResponse
	// NewSession starts a session with the given TTL (etcd: at least 2 s).
	NewSession(ctx context.Context, ttl time.Duration) (Session, error)
	// Close releases the client (not the server of an embedded store).
	Close() error
}

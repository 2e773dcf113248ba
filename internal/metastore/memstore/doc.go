// Package memstore is an in-memory metastore.Store for unit tests of the
// layers above (metadata, controller, broker) and for single-process tools.
//
// It behaves like etcd where the metastore interface exposes etcd: one
// global revision counter that grows by one per transaction that changes
// something; a key's Version is its mod revision and Created its create
// revision; a delete event carries the revision of the delete.
//
// Sessions have a TTL but never expire on their own: a test ends one with
// (*Store).ExpireSession, which deletes its bound keys in one revision and
// closes Done, exactly what a lease expiry does on etcd.
//
// Several brokers in one test share one Store but each should use its own
// client (NewClient): closing a client ends only that client's sessions and
// watches, as a broker process dying would.
//
// Invariants: all state is guarded by Store.mu; every change is appended to
// the history and pushed to the matching watchers while the lock is held, so
// watchers see changes in revision order. Each watcher owns one goroutine
// that drains its unbounded FIFO into its channel; it ends when the watch's
// context ends, its client or the store closes, or after an error response.
// A slow reader therefore never blocks writers and never loses events.
//
// Test accessors: Revision, Changes (the change history since a revision),
// Compact, ExpireSession.
package memstore

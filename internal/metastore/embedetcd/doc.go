// Package embedetcd runs an etcd server inside the process, hiding
// go.etcd.io/etcd/server/v3/embed behind Start, Endpoints and Close.
//
// Defaults fit Samsa: periodic auto-compaction (5 minutes of history), an
// 8 GiB backend quota (room for millions of partition keys), etcd's
// 128-op transactions, and the server's zap logs bridged to the given slog
// logger at warning level and above (nil: discarded).
//
// Goroutines are etcd's own; Close stops them all. Close every client of
// the server before closing the server, or the clients retry until their
// own timeouts.
package embedetcd

// Package etcdstore is the metastore.Store over an etcd v3 cluster
// (go.etcd.io/etcd/client/v3): sessions are leases kept alive by the
// client, a key's Version is its ModRevision and Created its
// CreateRevision, Cmp is a ModRevision compare (Version 0: CreateRevision
// 0, the key is absent), Txn is an etcd Txn, and watches are etcd watches
// with WithRev/WithPrefix.
//
// Connect takes Kafka's connect-string habit: ParseConnect splits
// "host:port[,host:port...][/chroot]", and a chroot prefixes every key
// transparently (metastore.WithPrefix).
//
// Goroutines: the etcd client's own; one per session that drains its
// keep-alive channel and closes Done when the lease is gone, the keep-alive
// fails for a TTL, or the store closes; one per watch that translates
// responses until the etcd watch channel closes or the watch's context
// ends. List pages through large prefixes at one revision, so a million
// keys never hit a message size limit.
//
// Close closes the client without revoking leases: keys bound to its
// sessions vanish when their leases expire on the server, as a crashed
// broker's would. Close sessions first for a graceful exit.
package etcdstore

// Package zkstore is the metastore.Store over an Apache ZooKeeper ensemble
// (github.com/go-zookeeper/zk), as Kafka's ZooKeeper mode uses it.
//
// Keys are znode paths under the store's chroot ("/brokers/ids/1" is the
// znode chroot+"/brokers/ids/1"). A znode holds a key when its data is not
// null (an empty value is stored as zero bytes); parents created on the way
// to a key hold null data and are no keys. Deleting a key that has
// descendants sets its data to null; deleting the last key under an
// implicit parent removes the parent too (best effort: a concurrent writer
// that finds a parent gone creates it again).
//
// Revisions are zxids, ZooKeeper's global transaction ids, which only grow:
// a key's Version is its znode's Mzxid and Created its Czxid (a broker's
// epoch, as Kafka's). A Cmp reads the znode and turns into a multi
// CheckVersion on its Stat.Version, so it holds exactly when the Mzxid
// still is the one compared. Every Txn is one multi that also writes null
// data to the chroot znode; that op's Stat gives the multi's zxid, the
// TxnResult's Revision (the client library does not return the zxid of a
// reply), and the chroot's Mzxid is then the revision of the last Txn,
// which List returns. A Txn is at most MaxTxnOps cmps and ops
// (DefaultMaxTxnOps = 64) and at most jute.maxbuffer bytes (1 MiB, less a
// 64 KiB margin for the estimate), both ErrTooManyOps: metadata's
// WriteChunks puts 31 state chunks (256 partitions each) with their
// compares and the fence in one Txn, which fits even when every number of
// every row has ten digits and the ISR five replicas.
//
// Sessions are ZooKeeper sessions, one connection each; keys bound to one
// are ephemeral znodes created over its connection. Done closes when the
// server expires the session, when the connection has been lost for the
// session timeout and no server is reachable (the ensemble expires it
// then; the client only learns it on reconnecting), on Close, and on the
// store's Close. While servers are reachable but none serves (the
// ensemble lost its quorum: nobody expires sessions, and the next leader
// renews them) the session goes on, as a Kafka broker's does.
//
// Watches re-arm ZooKeeper's one-shot watches (the client library has no
// persistent watches): a data and a child watch per znode under the
// prefix, an exists watch where the prefix's directory is missing. A
// notification is answered by reading the znode again, so a watch
// delivers every key's changes in revision order but may skip a key's
// intermediate values: a key written twice before the read shows its last
// value once (Kafka's watchers re-read likewise). Notifications and replies
// share the connection, in zxid order; a batch of events is sent only once
// no notification arrived during its reads, so events never go back in
// revision. A delete's revision is its parent's Pzxid as read afterwards:
// the delete's zxid, or a later one if the parent's children changed again.
//
// ZooKeeper keeps no history. WatchKey and WatchPrefix with fromRevision >
// 0 deliver the current state of every key whose Mzxid is at least
// fromRevision, and deletes since then only when the watch starts from the
// revision a List of the same prefix on this store returned (the List then
// watch pattern of every caller): the store remembers the keys of its last
// few Lists and reports those gone as deleted. From any other revision
// deletes before the watch started are not reported.
//
// Goroutines: the client library's per connection; one per watch, ending
// with its context or the store's Close; a short-lived one when a session
// ends on its own, closing its connection.
package zkstore

// Package metastoretest is the conformance suite every metastore backend
// passes: Run exercises reads and versions, conditional and atomic
// transactions, the transaction size limit, sessions (close, expiry,
// binding to an ended session), and watches (key vs prefix, order across
// many writes, replay from a revision, compaction, cancellation).
// RunWith takes a backend's Options: with CoalescedWatches (ZooKeeper) the
// burst of writes may reach a watch with a key's intermediate values
// skipped, still in revision order and ending with every key's last value.
//
// The suite assumes nothing about absolute revisions, only their order, so
// it runs against a shared etcd server with a fresh chroot per test. It
// starts no goroutines of its own; every watch it opens is cancelled by the
// test's cleanup.
package metastoretest

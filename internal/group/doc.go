// Package group is Samsa's group coordinator for Kafka's classic group
// protocol (Kafka's GroupCoordinator, GroupMetadataManager, GroupMetadata
// and MemberMetadata), with committed offsets kept in __consumer_offsets.
//
// Files: state.go (the five states and the allowed transitions),
// member.go (MemberMetadata), group.go (GroupMetadata: members, protocol
// selection, leader), join.go (JoinGroup, KIP-394 and KIP-345), sync.go
// (SyncGroup, Heartbeat, LeaveGroup), timers.go (delayed joins, pending
// syncs, session expiry: Tick), offsets.go (commit validation, committed
// offsets, expiry), txn.go (transactional offsets pending per producer
// until its marker, KIP-98/KIP-447), hash.go (Kafka's partitionFor),
// records.go (the __consumer_offsets keys and values, kmsg types),
// batches.go (the batches written and loaded: plain, transactional,
// transaction markers), coordinator*.go and coord_*.go (the shell:
// partitions loaded and unloaded, the log, the timer goroutine;
// coord_txn.go: TxnOffsetCommit and CompleteTxn).
//
// Invariants: Group is a deterministic core. It starts no goroutine, does
// no I/O and reads no clock: time enters as an argument, answers leave
// through the callbacks a request registered (Kafka's awaitingJoinCallback
// and awaitingSyncCallback), and writes of the group's metadata go through
// the Persist hook its owner set, whose done callback the owner calls
// later, with the group's lock held. Callers serialize every call on a
// group (the Coordinator holds one mutex).
//
// Goroutines: the Coordinator runs one, Run, which ticks every loaded
// group's timers and expires offsets; waits for the high watermark of a
// write happen on the requesting connection's goroutine.
package group

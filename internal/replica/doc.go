// Package replica holds the partitions hosted on this broker: each wraps a
// storage.Log with the partition's role, leader epoch, replicas and ISR,
// keeps the high watermark (HW) as Kafka's replication does, and wakes
// fetches that wait for new data.
//
// Roles: a partition is the leader or a follower, with the leader epoch,
// replicas and ISR of the controller's last decision (Manager.Become, fed by
// LeaderAndIsr). Decisions only move forward: one whose leader epoch is not
// newer is refused. A follower refuses produce and consumer reads with
// ErrNotLeader; a leader refuses the follower path (replicated appends,
// truncation) with ErrNotFollower. Role changes wait for appends and
// truncations in flight. Becoming leader starts the new leader epoch at the
// log end offset (LEO) in the log's epoch cache, resets what the leader
// knows of its followers (LEO unknown, ISR members caught up as of now) and
// keeps the HW. Becoming follower leaves the log to the fetcher, which
// truncates it (OffsetForLeaderEpoch) and appends what the leader has.
// Partitions hosted by Ensure (a single broker without controller) lead
// with epoch 0 and no other replica: their ISR is themselves.
//
// Leader (pure core in leaderstate.go, wired in partition.go and isr.go):
// each follower fetch records the follower's LEO and when it last caught up
// (Kafka's updateFollowerFetchState). HW = min LEO over the maximal ISR, the
// leader's own LEO included; an ISR follower whose LEO is unknown holds it.
// ISR changes go to the controller as proposals (AlterPartition, KIP-497),
// one in flight per partition; while one is, the maximal ISR (committed ∪
// proposed) counts for the HW and acks=all. A follower outside the ISR whose
// LEO reached the HW and the start of the leader epoch is proposed in on its
// fetch; ShrinkISRs proposes out the ISR followers not caught up for longer
// than replica.lag.time.max.ms. The controller's answer (ApplyISRResult) is
// adopted only for this leader epoch and a newer partition epoch. acks=all
// appends are refused while the committed ISR is smaller than
// min.insync.replicas and done once the HW passes them (Acked).
//
// Transactions (txn.go): the leader appends the coordinator's markers as
// acks=all appends (AppendTxnMarker); read_committed consumers read below
// the last stable offset (ReadCommitted), which storage derives from the
// HW at each call, so it moves when the HW moves.
//
// Invariants: consumers never read at or above the HW. On a leader the HW
// never decreases and never exceeds the LEO; it is stored in the log and
// checkpointed by storage. A follower's HW is the leader's, clamped to its
// own LEO. Waiters and listeners (fetch sessions, listen.go) are woken
// whenever the HW advances, the log grows on a leader, the role changes or
// the log is truncated.
//
// Goroutines: none. Partition methods are safe for concurrent use; waiters are
// woken by a non-blocking send on their channel; the ISR proposer is called
// without locks held. Lock order: roleMu, then lmu, then mu.
package replica

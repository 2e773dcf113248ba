// Package replica holds the partitions hosted on this broker: each wraps a
// storage.Log with the partition's role, leader epoch and high watermark, and
// wakes fetches that wait for new data.
//
// Roles: a partition is the leader or a follower, with the leader epoch,
// replicas and ISR of the controller's last decision (Manager.Become, fed by
// LeaderAndIsr). Decisions only move forward: one whose leader epoch is not
// newer is refused. A follower refuses produce and consumer reads with
// ErrNotLeader; role changes wait for appends in flight. Partitions hosted by
// Ensure (a single broker without controller) lead with epoch 0.
//
// Invariants: consumers never see offsets at or above the high watermark.
// On a single broker (the foundation issue) every partition is a leader with
// a replica set of one, so the high watermark equals the log end offset; the
// replication issue replaces that rule with min(LEO) over the ISR.
//
// Goroutines: none. Partition methods are safe for concurrent use; waiters are
// woken by a non-blocking send on their channel.
package replica

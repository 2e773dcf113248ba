// Package txn is Samsa's transaction coordinator (Kafka's
// TransactionCoordinator, TransactionStateManager, TransactionMetadata and
// TransactionMarkerChannelManager; KIP-98, KIP-360, KIP-588, KIP-890 part 1).
//
// Files: state.go (the eight states and Kafka's table of allowed
// transitions), metadata.go (Metadata, one transactional id, and its
// two-step changes: prepare a Transit, write it, Complete or Abandon),
// decide.go (the decisions of InitProducerId, AddPartitionsToTxn, the
// verify-only form, EndTxn, timeouts and expiry, with Kafka's errors),
// records.go (the __transaction_state key and value, kmsg types),
// coordinator.go, coord_ops.go, coord_load.go, coord_markers.go and
// timers.go (the shell: partitions loaded and unloaded, the writes, the
// requests, the markers of each completed transaction, the timers),
// markers.go (Channel: WriteTxnMarkers to the partitions' leaders, with
// Kafka's retry rules).
//
// Invariants: Metadata is a deterministic core. It starts no goroutine,
// does no I/O and reads no clock: time enters as an argument. At most one
// change of an id is pending at a time; every other change meanwhile
// answers CONCURRENT_TRANSACTIONS (Complete* stays pending while the
// markers are written). A change takes effect, and is answered, only once
// its Transit is written and replicated (Complete); a failed write leaves
// the id as it was (Abandon), except that a fence's bumped epoch stays.
// The Coordinator holds one mutex over its partitions and ids, released
// while a write waits for its replicas. One deliberate difference from
// Kafka: EndTxn answers once the markers and Complete* are written (within
// Config.EndTxnWait), not right after Prepare*, so that a producer's next
// transaction does not start with CONCURRENT_TRANSACTIONS and a backoff.
//
// Goroutines: the Coordinator's Run (the timers) is owned by the caller
// and awaits, when it ends, the ones the coordinator started: one per
// partition load and one per transaction whose markers are being written
// (Channel.Write sends to the leaders of a round concurrently). Requests
// run on their callers' goroutines and block for their write.
package txn

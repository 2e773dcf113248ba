// Package txn is Samsa's transaction coordinator (Kafka's
// TransactionCoordinator, TransactionStateManager, TransactionMetadata and
// TransactionMarkerChannelManager; KIP-98, KIP-360, KIP-588, KIP-890 part 1).
//
// Files: state.go (the eight states and Kafka's table of allowed
// transitions), metadata.go (Metadata, one transactional id, and its
// two-step changes: prepare a Transit, write it, Complete or Abandon),
// decide.go (the decisions of InitProducerId, AddPartitionsToTxn, the
// verify-only form, EndTxn, timeouts and expiry, with Kafka's errors).
//
// Invariants: Metadata is a deterministic core. It starts no goroutine,
// does no I/O and reads no clock: time enters as an argument. At most one
// change of an id is pending at a time; every other change meanwhile
// answers CONCURRENT_TRANSACTIONS. A change takes effect only once its
// Transit is written (Complete); a failed write leaves the id as it was
// (Abandon), except that a fence's bumped epoch stays.
package txn

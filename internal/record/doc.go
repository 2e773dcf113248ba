// Package record handles Kafka record batches, format v2 (magic 2): header
// parsing, validation of produce payloads, in-place rewrites done by the log
// on append (base offset, partition leader epoch, LogAppendTime),
// iteration over the records of a batch, decompressing when needed, and
// Rebuild, which writes a batch thinned by the log cleaner (compressed
// with the batch's codec).
//
// Role: the deterministic core of the produce path. Everything here is a pure
// function over byte slices: no goroutines, no I/O, no clocks.
//
// Invariants:
//   - No function panics on malformed input; every length read from the wire
//     is bounds-checked before use. Errors wrap one of the exported sentinels
//     (ErrCorrupt, ErrInvalidRecord, ErrUnsupportedMagic, ErrTooLarge) so the
//     caller maps them to Kafka error codes with errors.Is.
//   - The batch CRC (CRC-32C) covers bytes from the attributes field to the end
//     of the batch; SetBaseOffset and SetPartitionLeaderEpoch change bytes
//     outside it, SetLogAppendTime recomputes it.
//   - Validate accepting a payload implies Records succeeds on each batch in it,
//     and ReadProduced with CheckProduced (Kafka's default rules) accept a
//     payload exactly when it is one batch Validate accepts (both checked by
//     FuzzValidate).
//   - CheckProduced reads a produced batch's records once, decompressing
//     once, whatever rules of its topic apply (produced.go).
//   - Validate wants what producers send: NumRecords = LastOffsetDelta+1,
//     offset deltas 0..n-1. Records also reads what compaction leaves:
//     increasing deltas with gaps, and empty batches (no records); such
//     batches keep their base and last offsets, so consumers, followers
//     and producer sequences see the same offset ranges.
package record

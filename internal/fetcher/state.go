// Per-partition fetch state and the pure decisions taken on answers from the
// leader: the truncation offset after OffsetForLeaderEpoch (Kafka's
// AbstractFetcherThread.getOffsetTruncationState), what a Fetch partition
// answer leads to, and cutting fetched bytes down to whole batches. No I/O.
package fetcher

import (
	"encoding/binary"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type phase uint8

const (
	truncating phase = iota
	fetching
	// fenced: the leader has a newer leader epoch than this target
	// (FENCED_LEADER_EPOCH). Nothing is asked about the partition until a
	// LeaderAndIsr re-targets it (Kafka's markPartitionFailed on
	// onPartitionFenced): retrying could only be fenced again.
	fenced
)

func (p phase) String() string {
	return [...]string{"Truncating", "Fetching", "Fenced"}[p]
}

// partState is one partition in a fetcher. A (re)target makes a new one, so
// an answer to a request built for an older state is recognised and dropped.
type partState struct {
	target Target
	phase  phase
	// askEpoch, when >= 0, caps the epoch of the next OffsetForLeaderEpoch
	// (KIP-279: the end of our largest epoch below the leader's answer).
	askEpoch   int32
	delayUntil time.Time
	oorStreak  int32 // OFFSET_OUT_OF_RANGE answers sent back to Truncating in a row
	refusals   int32 // leader refusals in a row (fetcher.retryLater)
	// lag is the leader's high watermark less our log end offset, as of
	// the last answer that gave the partition's records or high watermark
	// (Kafka's FetcherLagStats; Manager.MaxLag).
	lag int64

	// The fetcher's lists the state is in (track.go), and gone once it is
	// no longer its partition's state (replaced or removed).
	queued, delayed, inTruncs, gone bool
}

// stateSlab hands out new states from arrays of up to slabStates of them:
// one allocation for many, where a LeaderAndIsr brings thousands. A state
// keeps its array alive, so an array may outlive most of its states
// (re-targeted or removed) by up to slabStates-1 dead ones; the bound keeps
// that small.
//
// Evidence: BenchmarkAddPartitions ~100 -> 21 ms, 68495 -> 4665 allocs/op
// (commit 97737c3, with the per-topic tables and hand-overs by index).
type stateSlab struct{ free []partState }

const slabStates = 128

// newState returns a new state for t; more is how many the caller may
// still ask for, itself included (an array is no longer than that).
func (s *stateSlab) newState(t Target, more int) *partState {
	if len(s.free) == 0 {
		s.free = make([]partState, max(1, min(more, slabStates)))
	}
	ps := &s.free[0]
	s.free = s.free[1:]
	*ps = partState{target: t, phase: truncating, askEpoch: -1}
	return ps
}

func (ps *partState) ready(now time.Time) bool { return !now.Before(ps.delayUntil) }

// sameTarget reports whether b re-targets nothing: same leader, epoch, topic
// id and partition object (Kafka keeps the fetch state then).
func sameTarget(a, b Target) bool {
	if a.Leader != b.Leader || a.LeaderEpoch != b.LeaderEpoch || a.TopicID != b.TopicID {
		return false
	}
	if a.Partition == nil || b.Partition == nil {
		return a.Partition == b.Partition
	}
	ta, tb := reflect.TypeOf(a.Partition), reflect.TypeOf(b.Partition)
	return ta == tb && ta.Comparable() && a.Partition == b.Partition
}

// askEpoch is the epoch to send in OffsetForLeaderEpoch: the latest one, or
// the KIP-279 cap if lower. ok is false when the partition has no epoch.
func askEpoch(latest int32, hasLatest bool, capEpoch int32) (int32, bool) {
	if !hasLatest {
		return 0, false
	}
	if capEpoch >= 0 && capEpoch < latest {
		return capEpoch, true
	}
	return latest, true
}

// noEpochTruncation is the rule for a partition without any leader epoch: it
// cannot tell which of its records the leader agrees with, so whatever it
// holds is dropped and refetched (Kafka falls back to the high watermark,
// which the fetcher does not see).
func noEpochTruncation(leo, logStart int64) (offset int64, needed bool) {
	return logStart, leo > logStart
}

// truncation is the outcome of one OffsetForLeaderEpoch answer (Kafka's
// OffsetTruncationState).
type truncation struct {
	Offset   int64 // truncate the log to Offset
	Complete bool  // start fetching; otherwise ask again about Next
	Next     int32
}

// truncationFor decides from the leader's answer (leaderEpoch, leaderEnd)
// where to truncate a log ending at leo. ours is the partition's own
// EndOffsetForEpoch.
//   - leader end UNDEFINED (-1): the leader knows nothing of our epoch; drop
//     everything (from logStart) and refetch.
//   - leader epoch UNDEFINED: min(leader end, leo).
//   - we do not know the leader's epoch either (our end offset -1): min(leader
//     end, leo), as before KIP-279.
//   - our largest epoch <= the leader's is a smaller one E: truncate to its
//     end and ask again about E (KIP-279).
//   - otherwise min(our end for it, leader end, leo).
func truncationFor(leaderEpoch int32, leaderEnd, leo, logStart int64, ours func(int32) (int32, int64)) truncation {
	if leaderEnd < 0 {
		return truncation{Offset: min(logStart, leo), Complete: true}
	}
	if leaderEpoch < 0 {
		return truncation{Offset: min(leaderEnd, leo), Complete: true}
	}
	epoch, end := ours(leaderEpoch)
	switch {
	case end < 0:
		return truncation{Offset: min(leaderEnd, leo), Complete: true}
	case epoch >= 0 && epoch < leaderEpoch:
		return truncation{Offset: min(end, leo), Next: epoch}
	default:
		return truncation{Offset: min(end, leaderEnd, leo), Complete: true}
	}
}

// action is what a Fetch answer for one partition leads to.
type action uint8

const (
	actAppend   action = iota // append the records, adopt the high watermark
	actTruncate               // back to Truncating
	actResetTo                // TruncateFullyAndStartAt(offset), keep fetching
	actDelay                  // back off the partition, same phase
	actFence                  // stop fetching until re-targeted
)

func (a action) String() string {
	return [...]string{"append", "truncate", "reset", "delay", "fence"}[a]
}

// fetchAction classifies a partition's Fetch answer for a log ending at leo.
func fetchAction(p *kmsg.FetchResponseTopicPartition, leo int64) (action, int64) {
	switch p.ErrorCode {
	case 0:
		if p.DivergingEpoch.EndOffset >= 0 && p.DivergingEpoch.Epoch >= 0 {
			return actTruncate, 0
		}
		return actAppend, 0
	case kerr.OffsetOutOfRange.Code:
		// Below the leader's log start: restart there. Otherwise our log
		// runs past the leader's (unclean election): truncate.
		if p.LogStartOffset >= 0 && leo < p.LogStartOffset {
			return actResetTo, p.LogStartOffset
		}
		return actTruncate, 0
	case kerr.FencedLeaderEpoch.Code:
		// Our epoch is older than the leader's: only a newer LeaderAndIsr
		// helps.
		return actFence, 0
	default:
		// UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER,
		// UNKNOWN_TOPIC_OR_PARTITION, storage errors...: a newer
		// LeaderAndIsr re-targets us; until then, retry later.
		return actDelay, 0
	}
}

// Record batch v2 header layout (Kafka's DefaultRecordBatch).
const (
	batchLengthAt     = 8  // int32 length of what follows the length field
	batchOverhead     = 12 // base offset + length
	lastOffsetDeltaAt = 23
	minBatchLength    = 49 // a v2 header without records, after the length field
)

// wholeBatches returns the longest prefix of b made of whole batches: a
// fetch answer cut at max bytes may end in a partial batch. A batch claiming
// a length shorter than a v2 header ends the prefix too.
func wholeBatches(b []byte) []byte {
	pos := 0
	for len(b)-pos >= batchOverhead {
		n := int64(int32(binary.BigEndian.Uint32(b[pos+batchLengthAt:])))
		if n < minBatchLength || int64(len(b)-pos) < batchOverhead+n {
			break
		}
		pos += batchOverhead + int(n)
	}
	return b[:pos]
}

// batchOffsets reads the base and last offset of the batch at the start of
// b, which must hold a whole batch (see wholeBatches).
func batchOffsets(b []byte) (base, last int64) {
	base = int64(binary.BigEndian.Uint64(b))
	return base, base + int64(int32(binary.BigEndian.Uint32(b[lastOffsetDeltaAt:])))
}

// skipFetched drops the leading whole batches wholly below leo (a leader may
// answer from the start of the batch holding the fetch offset) and returns
// the rest with the base offset of its first batch (-1 when empty).
func skipFetched(b []byte, leo int64) ([]byte, int64) {
	for len(b) > 0 {
		base, last := batchOffsets(b)
		if last >= leo {
			return b, base
		}
		b = b[batchOverhead+int(binary.BigEndian.Uint32(b[batchLengthAt:])):]
	}
	return b, -1
}

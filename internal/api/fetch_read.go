package api

// The reads of a fetch (01_fetch.go): each partition read by the leader for
// a follower (up to the log end offset, recording the follower's position)
// or a consumer (below the high watermark, or below the last stable offset
// with the aborted transactions of what is returned for read_committed),
// within the request's byte limits, gathered across the fetch's passes. The record buffers come from
// storage's pool and go back to it once the response is encoded
// (server.AfterResponse).

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// fetchResult is what one partition read produced.
type fetchResult struct {
	part    *sessPart
	err     int16
	hosted  bool // the partition is hosted here (counted in TotalFetchRequestsPerSec)
	records []byte
	// section: the records as a section of a segment file instead
	// (sent with sendfile, fetch_sections.go); owned by the result until
	// the response takes it.
	section           *storage.Section
	hw, lso, logStart int64
	end               int64 // end of what the fetcher may read: LEO (followers), HW or LSO; -1 unknown
	// aborted: read_committed only (nil otherwise, sent as null), the
	// aborted transactions overlapping the records returned.
	aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
}

// fetchAcc gathers a fetch's latest result per partition across its passes,
// in the order partitions were first read. A partition's result is found
// through the partition itself (sessPart.accGen/accAt, valid for the fetch
// whose gen they carry: a session serves one fetch at a time), not a map:
// a follower's fetch may read thousands of partitions.
type fetchAcc struct {
	results       []fetchResult
	gen           uint64
	maxBytes      int
	total, failed int  // record bytes and errors over results
	committed     bool // a consumer's read_committed fetch (isolation level 1)
	sections      bool // read sections, not bytes (the connection sends them with sendfile)
	nsections     int  // sections in results
}

// maxFetchSections bounds the sections of one fetch (each holds a
// descriptor until its response is sent); partitions past it are read
// as bytes.
const maxFetchSections = 256

// accGens numbers fetches for sessPart.accGen; 0 is never used.
var accGens atomic.Uint64

func newFetchAcc(maxBytes int) *fetchAcc {
	return &fetchAcc{maxBytes: maxBytes, gen: accGens.Add(1)}
}

// index is the position of sp's result, if this fetch has one.
func (a *fetchAcc) index(sp *sessPart) (int, bool) {
	if sp.accGen == a.gen {
		return sp.accAt, true
	}
	return 0, false
}

// put records r, replacing an earlier result for its partition.
func (a *fetchAcc) put(r fetchResult) {
	if i, ok := a.index(r.part); ok {
		a.drop(a.results[i])
		a.results[i].release()
		a.results[i] = r
	} else {
		r.part.accGen, r.part.accAt = a.gen, len(a.results)
		a.results = append(a.results, r)
	}
	a.total += r.size()
	if r.section != nil {
		a.nsections++
	}
	if r.err != 0 {
		a.failed++
	}
}

func (a *fetchAcc) drop(r fetchResult) {
	a.total -= r.size()
	if r.section != nil {
		a.nsections--
	}
	if r.err != 0 {
		a.failed--
	}
}

// release hands the records read back to storage's buffer pool and closes
// the sections the response did not take.
func (a *fetchAcc) release() {
	for i := range a.results {
		a.results[i].release()
	}
}

// disown forgets the sections of the results: the response took them.
func (a *fetchAcc) disown() {
	for i := range a.results {
		a.results[i].section = nil
	}
}

func (r *fetchResult) release() {
	storage.ReleaseRecords(r.records)
	if r.section != nil {
		r.section.Close()
		r.section = nil
	}
}

// size is the record bytes of r.
func (r *fetchResult) size() int {
	if r.section != nil {
		return r.section.Len()
	}
	return len(r.records)
}

// how is the way to read a partition within limit.
func (a *fetchAcc) how(minOne bool) storage.ReadHow {
	var how storage.ReadHow
	if minOne {
		how |= storage.MinOneBatch
	}
	if a.sections && a.nsections < maxFetchSections {
		how |= storage.AsSection
	}
	return how
}

// budget is the byte limit and KIP-74 first-batch rule for reading sp.
func (a *fetchAcc) budget(sp *sessPart) (limit int32, minOne bool) {
	others := a.total
	if i, ok := a.index(sp); ok {
		others -= a.results[i].size()
	}
	return int32(max(min(int(sp.maxBytes), a.maxBytes-others), 0)), others == 0
}

// readFetch reads parts into acc within the request's byte limits, for the
// follower replicaID (>= 0) or a consumer.
func (h *Handler) readFetch(acc *fetchAcc, parts []*sessPart, replicaID int32, sess *fetchSession) {
	now := h.Now()
	if len(acc.results) == 0 { // the first pass reads the most
		acc.results = slices.Grow(acc.results, len(parts))
	}
	for _, sp := range parts {
		r := fetchResult{part: sp, hw: -1, lso: -1, logStart: -1, end: -1}
		limit, minOne := acc.budget(sp)
		switch {
		case replicaID >= 0:
			h.readFollower(sp, replicaID, limit, acc.how(minOne), now, sess, &r)
		case acc.committed:
			h.readCommitted(sp, limit, acc.how(minOne), &r)
		default:
			h.readPartition(sp, limit, acc.how(minOne), &r)
		}
		acc.put(r)
	}
}

// partitionFor returns sp's partition; a session partition listens to it
// from then on (to the new one if it was replaced). The partition a session
// listens to is used without a look-up while it is hosted.
func (h *Handler) partitionFor(sp *sessPart) *replica.Partition {
	if sp.sess != nil && sp.p != nil && !sp.p.Detached() {
		return sp.p
	}
	p := h.Partitions.Get(sp.key)
	if sp.sess != nil && p != sp.p {
		sp.sess.release(sp)
		if p != nil {
			p.AddListener(sp)
			sp.p = p
		}
	}
	return p
}

// leaderFor returns the partition if this broker leads it at the fetch's
// leader epoch, or sets the error. The epoch is checked first, as Kafka's
// Partition.getLocalLog does: a former leader answers a follower still at
// the old epoch FENCED_LEADER_EPOCH (the follower then waits for its
// LeaderAndIsr instead of retrying), and a leader-to-be not yet at the
// follower's epoch UNKNOWN_LEADER_EPOCH (retried soon).
func (h *Handler) leaderFor(sp *sessPart, r *fetchResult) *replica.Partition {
	p := h.partitionFor(sp)
	if p == nil {
		r.err = h.missingPartitionCode(sp.key.Topic, sp.key.Partition)
		return nil
	}
	r.hosted = true
	if code := leaderEpochCode(sp.leaderEpoch, p.LeaderEpoch()); code != 0 {
		r.err = code
		return nil
	}
	if !p.IsLeader() {
		r.err = kerr.NotLeaderForPartition.Code
		return nil
	}
	return p
}

// readFollower reads up to the log end offset for follower replicaID and
// records its fetch offset, even when limit leaves no room for data; in a
// follower session the partition counts as fetched at every later fetch of
// the session until it changes (replica.FetchClock).
func (h *Handler) readFollower(sp *sessPart, replicaID, limit int32, how storage.ReadHow, now time.Time, sess *fetchSession, r *fetchResult) {
	p := h.leaderFor(sp, r)
	if p == nil {
		return
	}
	var res storage.ReadResult
	var hw int64
	var err error
	if sess != nil && sess.follower && sess.replicaID == replicaID {
		res, hw, err = p.FollowerReadInSession(sess.clock, replicaID, sp.fetchOffset, limit, how, now)
	} else {
		res, hw, err = p.FollowerRead(replicaID, sp.fetchOffset, limit, how, now)
	}
	p.RecordFollowerLogStart(replicaID, sp.logStart)
	h.readDone(p, res, hw, err, r)
	r.lso = min(p.LastStableOffset(), hw)
	r.end = res.LogEndOffset
}

// readPartition reads below the high watermark for a consumer.
func (h *Handler) readPartition(sp *sessPart, limit int32, how storage.ReadHow, r *fetchResult) {
	p := h.leaderFor(sp, r)
	if p == nil {
		return
	}
	if limit <= 0 && how&storage.MinOneBatch == 0 {
		r.hw, r.logStart = p.HighWatermark(), p.LogStartOffset()
		r.lso = min(p.LastStableOffset(), r.hw)
		r.end = r.hw
		return
	}
	res, hw, err := p.Read(sp.fetchOffset, limit, how)
	h.readDone(p, res, hw, err, r)
	r.lso = min(p.LastStableOffset(), hw)
	r.end = hw
}

// readCommitted reads below the last stable offset for a read_committed
// consumer and lists the aborted transactions overlapping what it returns
// (Kafka's collectAbortedTransactions up to the offset after the last
// batch returned): the consumer drops their records.
func (h *Handler) readCommitted(sp *sessPart, limit int32, how storage.ReadHow, r *fetchResult) {
	p := h.leaderFor(sp, r)
	if p == nil {
		return
	}
	r.aborted = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	if limit <= 0 && how&storage.MinOneBatch == 0 {
		r.hw, r.logStart = p.HighWatermark(), p.LogStartOffset()
		r.lso = min(p.LastStableOffset(), r.hw)
		r.end = r.lso
		return
	}
	res, hw, lso, err := p.ReadCommitted(sp.fetchOffset, limit, how)
	h.readDone(p, res, hw, err, r)
	r.lso, r.end = lso, lso
	if r.size() == 0 {
		return
	}
	end := endOffset(r.records)
	if r.section != nil {
		end = r.section.End
	}
	for _, a := range p.AbortedTxns(sp.fetchOffset, end) {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
		r.aborted = append(r.aborted, at)
	}
}

// endOffset is the offset after the last of the whole batches in records.
func endOffset(records []byte) int64 {
	end := int64(-1)
	for len(records) >= record.HeaderSize {
		h, err := record.ReadHeader(records)
		if err != nil || h.Size() > len(records) {
			break
		}
		end = h.LastOffset() + 1
		records = records[h.Size():]
	}
	return end
}

func (h *Handler) readDone(p *replica.Partition, res storage.ReadResult, hw int64, err error, r *fetchResult) {
	r.hw, r.logStart = hw, res.LogStartOffset
	if err != nil {
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			r.logStart = p.LogStartOffset()
		}
		r.err = errorCode(err)
		return
	}
	r.records, r.section = res.Records, res.Section
}

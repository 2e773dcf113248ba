// The two requests of a fetcher round and how their answers are applied:
// OffsetForLeaderEpoch for Truncating partitions, Fetch for Fetching ones
// (built from the fetch session, see session.go). Answers are applied under
// the fetcher's mutex and only to the partition state a request was built
// for, still current, in the same phase and at the same log end offset; an
// answer about a partition that was not asked about is ignored.
package fetcher

import (
	"fmt"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type askEntry struct {
	tp    kafka.TopicPartition
	ps    *partState
	epoch int32
}

type fetchEntry struct {
	tp     kafka.TopicPartition
	ps     *partState
	offset int64
}

// topicEntry is the index in *list of topic's entry, which index records;
// the first time topic is seen, newEntry() is appended for it.
func topicEntry[T any](list *[]T, index map[string]int, topic string, newEntry func() T) int {
	i, ok := index[topic]
	if !ok {
		i = len(*list)
		index[topic] = i
		*list = append(*list, newEntry())
	}
	return i
}

func (f *fetcher) truncate(entries []askEntry) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(leaderEpochsVersion)
	req.ReplicaID = f.cfg.NodeID
	topics := map[string]int{}
	asked := make(map[kafka.TopicPartition]askEntry, len(entries))
	for _, e := range entries {
		i := topicEntry(&req.Topics, topics, e.tp.Topic, func() kmsg.OffsetForLeaderEpochRequestTopic {
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = e.tp.Topic
			return t
		})
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.Partition = e.tp.Partition
		p.CurrentLeaderEpoch = e.ps.target.LeaderEpoch
		p.LeaderEpoch = e.epoch
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		asked[e.tp] = e
	}
	r := kmsg.NewPtrOffsetForLeaderEpochResponse()
	if err := f.send(req, r); err != nil {
		return
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	for i := range r.Topics {
		t := &r.Topics[i]
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			e, ok := asked[tp]
			if !ok {
				continue
			}
			delete(asked, tp)
			if !f.current(e.ps, truncating) {
				continue
			}
			f.applyEpochEnd(e, rp, now)
		}
	}
	for _, e := range asked { // not answered: ask again later
		if f.current(e.ps, truncating) {
			f.delay(e.tp, e.ps, now, f.cfg.Backoff)
		}
	}
}

// applyEpochEnd truncates one partition after the leader's answer. Caller
// holds f.mu.
func (f *fetcher) applyEpochEnd(e askEntry, rp *kmsg.OffsetForLeaderEpochResponseTopicPartition, now time.Time) {
	ps, p := e.ps, e.ps.target.Partition
	if rp.ErrorCode == kerr.FencedLeaderEpoch.Code {
		f.fence(e.tp, ps)
		return
	}
	if rp.ErrorCode != 0 {
		if f.debug() {
			f.log.Debug("replica fetcher: OffsetForLeaderEpoch refused; backing off", "partition", e.tp, "err", kerr.ErrorForCode(rp.ErrorCode))
		}
		f.retryLater(e.tp, ps, now)
		return
	}
	ps.refusals = 0
	leo := p.LogEndOffset()
	tr := truncationFor(rp.LeaderEpoch, rp.EndOffset, leo, p.LogStartOffset(), p.EndOffsetForEpoch)
	if err := truncateLog(p, tr.Offset); err != nil {
		f.partitionFailed(e.tp, ps, now, "truncation failed", err)
		return
	}
	if tr.Offset < leo {
		f.log.Info("replica fetcher: truncated", "partition", e.tp, "askedEpoch", e.epoch,
			"leaderEpoch", rp.LeaderEpoch, "leaderEndOffset", rp.EndOffset, "from", leo, "to", tr.Offset, "complete", tr.Complete)
	}
	if tr.Complete {
		f.setFetching(e.tp, ps)
	} else {
		ps.askEpoch = tr.Next
	}
}

// fetchRound is one Fetch request with what it changes in the session.
type fetchRound struct {
	req     *kmsg.FetchRequest
	upserts []want
	forgets []kafka.TopicPartition
}

// buildFetchLocked builds the next Fetch of the session: every fetchable
// partition if it is full, else the pending ones that changed and those to
// forget. It returns nil when there is nothing to fetch. The leader waits for
// data at most until the first backoff ends (backoff, 0: none), so that a
// partition backing off rejoins the fetch in time. Caller holds f.mu.
func (f *fetcher) buildFetchLocked(backoff time.Duration) *fetchRound {
	var wants []want
	if f.sess.full() {
		f.clearChanges()
		wants = make([]want, 0, f.parts.len())
		for tp, ps := range f.parts.all() {
			if f.fetchable(ps) {
				wants = append(wants, f.wantLocked(tp, ps))
			}
		}
	} else {
		wants = f.changedWants()
	}
	upserts, forgets := f.sess.build(wants)
	if len(upserts) == 0 && len(forgets) == 0 && (f.sess.full() || f.sess.empty()) {
		return nil
	}
	return &fetchRound{req: f.fetchRequest(upserts, forgets, backoff), upserts: upserts, forgets: forgets}
}

// fetchRequest is the Fetch of the session's next epoch carrying upserts and
// forgets. Each run of upserts of one topic (a full fetch lists topic after
// topic, a hand-over queues them so) is looked up once, and the partitions
// of a request share one allocation.
func (f *fetcher) fetchRequest(upserts []want, forgets []kafka.TopicPartition, backoff time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(fetchVersion)
	req.ReplicaID = f.cfg.NodeID
	maxWait := f.cfg.MaxWait
	if backoff > 0 {
		maxWait = min(maxWait, backoff+time.Millisecond-1)
	}
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes = f.cfg.MinBytes
	req.MaxBytes = f.cfg.ResponseMaxBytes
	req.IsolationLevel = 0
	req.SessionID, req.SessionEpoch = f.sess.id, f.sess.epoch
	f.addFetchPartitions(req, upserts)
	forgotten := map[string]int{}
	for _, tp := range forgets {
		i := topicEntry(&req.ForgottenTopics, forgotten, tp.Topic, func() kmsg.FetchRequestForgottenTopic {
			t := kmsg.NewFetchRequestForgottenTopic()
			t.Topic = tp.Topic
			return t
		})
		req.ForgottenTopics[i].Partitions = append(req.ForgottenTopics[i].Partitions, tp.Partition)
	}
	return req
}

// addFetchPartitions lists upserts in req, each topic once.
func (f *fetcher) addFetchPartitions(req *kmsg.FetchRequest, upserts []want) {
	topics := map[string]int{}
	all := make([]kmsg.FetchRequestTopicPartition, len(upserts))
	for start := 0; start < len(upserts); {
		n := topicRun(upserts[start:])
		first := &upserts[start]
		i := topicEntry(&req.Topics, topics, first.tp.Topic, func() kmsg.FetchRequestTopic {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = first.tp.Topic, first.part.topicID
			t.Partitions = all[start : start : start+n] // capped: a later run of it appends elsewhere
			return t
		})
		for j := range upserts[start : start+n] {
			w := &upserts[start+j]
			p := kmsg.NewFetchRequestTopicPartition()
			p.Partition = w.tp.Partition
			p.CurrentLeaderEpoch = w.part.leaderEpoch
			p.FetchOffset = w.part.offset
			p.LastFetchedEpoch = -1
			p.LogStartOffset = w.part.logStart
			p.PartitionMaxBytes = f.cfg.MaxBytes
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		}
		start += n
	}
}

// topicRun is the number of wants at the start of ws of the first one's
// topic.
func topicRun(ws []want) int {
	n := 1
	for n < len(ws) && ws[n].tp.Topic == ws[0].tp.Topic {
		n++
	}
	return n
}

// wantLocked is ps fetched from its log end offset. Caller holds f.mu.
func (f *fetcher) wantLocked(tp kafka.TopicPartition, ps *partState) want {
	return want{tp: tp, fetch: true, part: sentPart{ps: ps, offset: ps.target.Partition.LogEndOffset(),
		leaderEpoch: ps.target.LeaderEpoch, topicID: ps.target.TopicID, logStart: ps.target.Partition.LogStartOffset()}}
}

func (f *fetcher) fetch(fr *fetchRound) {
	r := kmsg.NewPtrFetchResponse()
	if err := f.send(fr.req, r); err != nil {
		return
	}
	if r.ErrorCode != 0 {
		f.sess.failed(r.ErrorCode)
		if r.ErrorCode == kerr.FetchSessionIDNotFound.Code || r.ErrorCode == kerr.InvalidFetchSessionEpoch.Code {
			f.log.Debug("replica fetcher: fetch session lost; fetching in full", "err", kerr.ErrorForCode(r.ErrorCode))
			return
		}
		f.log.Warn("replica fetcher: fetch refused; backing off", "err", kerr.ErrorForCode(r.ErrorCode))
		f.sleep(f.cfg.Backoff, false)
		return
	}
	f.applyFetch(fr, r, time.Now())
}

// applyFetch applies a successful answer to fr: the session takes what fr
// changed, then each partition's answer is applied.
func (f *fetcher) applyFetch(fr *fetchRound, r *kmsg.FetchResponse, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sess.succeeded(r.SessionID, fr.upserts, fr.forgets)
	for i := range r.Topics {
		t := &r.Topics[i]
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			sp := f.sess.sent.get(tp)
			if sp.ps == nil {
				continue
			}
			// Only a partition whose fetch position moved needs listing
			// in the next request; the others (most answers: a new high
			// watermark, nothing to append) stay as the session has them.
			// A state change (delay, truncation) queues it itself.
			// A gone state's partition is queued anew or forgotten already.
			if ps := sp.ps; ps.gone {
				continue
			} else if !f.fetchable(ps) || ps.target.Partition.LogEndOffset() != sp.offset {
				f.queue(ps)
			} else if f.applyFetched(fetchEntry{tp, ps, sp.offset}, rp, now) {
				f.queue(ps)
			}
		}
	}
}

// applyFetched applies one partition's Fetch answer and reports whether its
// log end offset moved (records appended, log restarted) or its log start
// offset rose to the leader's: the session must then learn the new fetch
// offset or log start offset (the leader's DeleteRecords waits on it). Caller holds f.mu.
func (f *fetcher) applyFetched(e fetchEntry, rp *kmsg.FetchResponseTopicPartition, now time.Time) (moved bool) {
	ps, p := e.ps, e.ps.target.Partition
	act, off := fetchAction(rp, e.offset)
	switch act {
	case actFence:
		f.fence(e.tp, ps)
	case actDelay:
		if f.debug() {
			f.log.Debug("replica fetcher: fetch refused for partition; backing off", "partition", e.tp, "err", kerr.ErrorForCode(rp.ErrorCode))
		}
		f.retryLater(e.tp, ps, now)
	case actTruncate:
		f.log.Info("replica fetcher: log diverges from the leader; truncating", "partition", e.tp, "fetchOffset", e.offset,
			"err", kerr.ErrorForCode(rp.ErrorCode), "divergingEpoch", rp.DivergingEpoch.Epoch, "leaderLogStart", rp.LogStartOffset)
		f.setTruncating(e.tp, ps)
		if rp.ErrorCode == kerr.OffsetOutOfRange.Code {
			if ps.oorStreak++; ps.oorStreak > 1 { // truncation did not help: do not spin
				f.delay(e.tp, ps, now, f.cfg.Backoff)
			}
		}
	case actResetTo:
		f.log.Info("replica fetcher: fetch offset below the leader's log start; restarting the log there", "partition", e.tp, "fetchOffset", e.offset, "offset", off)
		if err := p.TruncateFullyAndStartAt(off); err != nil {
			f.partitionFailed(e.tp, ps, now, "restarting the log failed", err)
			return false
		}
		return true
	case actAppend:
		ps.oorStreak, ps.refusals = 0, 0
		next, appended, err := f.appendFetched(e, rp.RecordBatches)
		if err != nil {
			f.partitionFailed(e.tp, ps, now, "append failed", err)
			return false
		}
		if rp.HighWatermark >= 0 {
			p.SetFollowerHighWatermark(rp.HighWatermark)
			ps.lag = max(0, rp.HighWatermark-next)
		}
		start := p.LogStartOffset()
		if rp.LogStartOffset > start {
			p.RaiseLogStartOffset(rp.LogStartOffset)
		}
		return appended || p.LogStartOffset() != start
	}
	return false
}

// appendFetched appends the whole batches of records from the fetch offset
// on. A first batch straddling the fetch offset of an empty log (restarted
// mid-batch) restarts the log at that batch, as Kafka does.
// It reports the next offset to fetch (the log end offset after it) and
// whether anything was written.
func (f *fetcher) appendFetched(e fetchEntry, records []byte) (next int64, written bool, err error) {
	p := e.ps.target.Partition
	whole := wholeBatches(records)
	if len(whole) == 0 {
		if len(records) > 0 { // the leader did not send its first batch whole (KIP-74)
			return e.offset, false, fmt.Errorf("no whole batch in %d fetched bytes at offset %d", len(records), e.offset)
		}
		return e.offset, false, nil
	}
	rest, base := skipFetched(whole, e.offset)
	if len(rest) == 0 {
		return e.offset, false, nil
	}
	if base < e.offset && e.offset == p.LogStartOffset() {
		if err := p.TruncateFullyAndStartAt(base); err != nil {
			return e.offset, true, err
		}
	}
	info, err := p.AppendAsFollower(rest)
	if err != nil {
		return e.offset, true, err
	}
	f.cfg.Stats.ReplicationBytesIn.Add(int64(len(rest)))
	return info.LastOffset + 1, true, nil
}

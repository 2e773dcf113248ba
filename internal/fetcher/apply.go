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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/storage"
)

type askEntry struct {
	tp    storage.TopicPartition
	ps    *partState
	epoch int32
}

type fetchEntry struct {
	tp     storage.TopicPartition
	ps     *partState
	offset int64
}

// current reports whether ps is still tp's state in phase ph. Caller holds
// f.mu.
func (f *fetcher) current(tp storage.TopicPartition, ps *partState, ph phase) bool {
	return ps != nil && f.parts[tp] == ps && ps.phase == ph
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
	asked := make(map[storage.TopicPartition]askEntry, len(entries))
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
			tp := storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			e, ok := asked[tp]
			if !ok {
				continue
			}
			delete(asked, tp)
			if !f.current(tp, e.ps, truncating) {
				continue
			}
			f.applyEpochEnd(e, rp, now)
		}
	}
	for _, e := range asked { // not answered: ask again later
		if f.current(e.tp, e.ps, truncating) {
			f.delay(e.tp, e.ps, now, f.cfg.Backoff)
		}
	}
}

// applyEpochEnd truncates one partition after the leader's answer. Caller
// holds f.mu.
func (f *fetcher) applyEpochEnd(e askEntry, rp *kmsg.OffsetForLeaderEpochResponseTopicPartition, now time.Time) {
	ps, p := e.ps, e.ps.target.Partition
	if rp.ErrorCode != 0 {
		f.log.Debug("replica fetcher: OffsetForLeaderEpoch refused; backing off", "partition", e.tp, "err", kerr.ErrorForCode(rp.ErrorCode))
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
	forgets []storage.TopicPartition
}

// buildFetchLocked builds the next Fetch of the session: every fetchable
// partition if it is full, else the pending ones that changed and those to
// forget. It returns nil when there is nothing to fetch. The leader waits for
// data at most until the first backoff ends (backoff, 0: none), so that a
// partition backing off rejoins the fetch in time. Caller holds f.mu.
func (f *fetcher) buildFetchLocked(backoff time.Duration) *fetchRound {
	var wants []want
	if f.sess.full() {
		for tp, ps := range f.parts {
			if f.fetchable(tp, ps) {
				wants = append(wants, f.wantLocked(tp, ps))
			}
		}
	} else {
		for tp := range f.pending {
			if ps := f.parts[tp]; f.fetchable(tp, ps) {
				wants = append(wants, f.wantLocked(tp, ps))
			} else {
				wants = append(wants, want{tp: tp})
			}
		}
	}
	clear(f.pending)
	upserts, forgets := f.sess.build(wants)
	if len(upserts) == 0 && len(forgets) == 0 && (f.sess.full() || f.sess.empty()) {
		return nil
	}
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
	topics := map[string]int{}
	for _, w := range upserts {
		i := topicEntry(&req.Topics, topics, w.tp.Topic, func() kmsg.FetchRequestTopic {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = w.tp.Topic, w.part.topicID
			return t
		})
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = w.tp.Partition
		p.CurrentLeaderEpoch = w.part.leaderEpoch
		p.FetchOffset = w.part.offset
		p.LastFetchedEpoch = -1
		p.LogStartOffset = w.part.ps.target.Partition.LogStartOffset()
		p.PartitionMaxBytes = f.cfg.MaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	forgotten := map[string]int{}
	for _, tp := range forgets {
		i := topicEntry(&req.ForgottenTopics, forgotten, tp.Topic, func() kmsg.FetchRequestForgottenTopic {
			t := kmsg.NewFetchRequestForgottenTopic()
			t.Topic = tp.Topic
			return t
		})
		req.ForgottenTopics[i].Partitions = append(req.ForgottenTopics[i].Partitions, tp.Partition)
	}
	return &fetchRound{req: req, upserts: upserts, forgets: forgets}
}

// wantLocked is ps fetched from its log end offset. Caller holds f.mu.
func (f *fetcher) wantLocked(tp storage.TopicPartition, ps *partState) want {
	return want{tp: tp, fetch: true, part: sentPart{ps: ps, offset: ps.target.Partition.LogEndOffset(),
		leaderEpoch: ps.target.LeaderEpoch, topicID: ps.target.TopicID}}
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

	f.mu.Lock()
	defer f.mu.Unlock()
	f.sess.succeeded(r.SessionID, fr.upserts, fr.forgets)
	now := time.Now()
	for i := range r.Topics {
		t := &r.Topics[i]
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			tp := storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			sp, ok := f.sess.sent[tp]
			if !ok {
				continue
			}
			f.pending[tp] = struct{}{}
			if f.parts[tp] == sp.ps && f.fetchable(tp, sp.ps) && sp.ps.target.Partition.LogEndOffset() == sp.offset {
				f.applyFetched(fetchEntry{tp, sp.ps, sp.offset}, rp, now)
			}
		}
	}
}

// applyFetched applies one partition's Fetch answer. Caller holds f.mu.
func (f *fetcher) applyFetched(e fetchEntry, rp *kmsg.FetchResponseTopicPartition, now time.Time) {
	ps, p := e.ps, e.ps.target.Partition
	act, off := fetchAction(rp, e.offset)
	switch act {
	case actDelay:
		f.log.Debug("replica fetcher: fetch refused for partition; backing off", "partition", e.tp, "err", kerr.ErrorForCode(rp.ErrorCode))
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
		}
	case actAppend:
		ps.oorStreak, ps.refusals = 0, 0
		if err := f.appendFetched(e, rp.RecordBatches); err != nil {
			f.partitionFailed(e.tp, ps, now, "append failed", err)
			return
		}
		if rp.HighWatermark >= 0 {
			p.SetFollowerHighWatermark(rp.HighWatermark)
		}
	}
}

// appendFetched appends the whole batches of records from the fetch offset
// on. A first batch straddling the fetch offset of an empty log (restarted
// mid-batch) restarts the log at that batch, as Kafka does.
func (f *fetcher) appendFetched(e fetchEntry, records []byte) error {
	p := e.ps.target.Partition
	whole := wholeBatches(records)
	if len(whole) == 0 {
		if len(records) > 0 { // the leader did not send its first batch whole (KIP-74)
			return fmt.Errorf("no whole batch in %d fetched bytes at offset %d", len(records), e.offset)
		}
		return nil
	}
	rest, base := skipFetched(whole, e.offset)
	if len(rest) == 0 {
		return nil
	}
	if base < e.offset && e.offset == p.LogStartOffset() {
		if err := p.TruncateFullyAndStartAt(base); err != nil {
			return err
		}
	}
	_, err := p.AppendAsFollower(rest)
	return err
}

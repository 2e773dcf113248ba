// The two requests of a fetcher round and how their answers are applied:
// OffsetForLeaderEpoch for Truncating partitions, Fetch for Fetching ones.
// Answers are applied under the fetcher's mutex and only to the partition
// state a request was built for, still current and in the same phase; an
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

func (f *fetcher) truncate(entries []askEntry) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(leaderEpochsVersion)
	req.ReplicaID = f.cfg.NodeID
	topics := map[string]int{}
	asked := make(map[storage.TopicPartition]askEntry, len(entries))
	for _, e := range entries {
		i, ok := topics[e.tp.Topic]
		if !ok {
			i = len(req.Topics)
			topics[e.tp.Topic] = i
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = e.tp.Topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.Partition = e.tp.Partition
		p.CurrentLeaderEpoch = e.ps.target.LeaderEpoch
		p.LeaderEpoch = e.epoch
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		asked[e.tp] = e
	}
	resp, err := f.send(req)
	if err != nil {
		return
	}
	r := resp.(*kmsg.OffsetForLeaderEpochResponse)

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
			e.ps.delayUntil = now.Add(f.cfg.Backoff)
		}
	}
}

// applyEpochEnd truncates one partition after the leader's answer. Caller
// holds f.mu.
func (f *fetcher) applyEpochEnd(e askEntry, rp *kmsg.OffsetForLeaderEpochResponseTopicPartition, now time.Time) {
	ps, p := e.ps, e.ps.target.Partition
	if rp.ErrorCode != 0 {
		f.log.Debug("replica fetcher: OffsetForLeaderEpoch refused; backing off", "partition", e.tp, "err", kerr.ErrorForCode(rp.ErrorCode))
		ps.delayUntil = now.Add(f.cfg.Backoff)
		return
	}
	leo := p.LogEndOffset()
	tr := truncationFor(rp.LeaderEpoch, rp.EndOffset, leo, p.LogStartOffset(), p.EndOffsetForEpoch)
	if err := truncateLog(p, tr.Offset); err != nil {
		f.partitionFailed(ps, now, "truncation failed", err)
		return
	}
	if tr.Offset < leo {
		f.log.Info("replica fetcher: truncated", "partition", e.tp, "askedEpoch", e.epoch,
			"leaderEpoch", rp.LeaderEpoch, "leaderEndOffset", rp.EndOffset, "from", leo, "to", tr.Offset, "complete", tr.Complete)
	}
	if tr.Complete {
		ps.phase, ps.askEpoch = fetching, -1
	} else {
		ps.askEpoch = tr.Next
	}
}

func (f *fetcher) fetch(entries []fetchEntry) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(fetchVersion)
	req.ReplicaID = f.cfg.NodeID
	req.MaxWaitMillis = int32(f.cfg.MaxWait / time.Millisecond)
	req.MinBytes = f.cfg.MinBytes
	req.MaxBytes = f.cfg.ResponseMaxBytes
	req.IsolationLevel = 0
	req.SessionID, req.SessionEpoch = 0, -1
	topics := map[string]int{}
	asked := make(map[storage.TopicPartition]fetchEntry, len(entries))
	for _, e := range entries {
		i, ok := topics[e.tp.Topic]
		if !ok {
			i = len(req.Topics)
			topics[e.tp.Topic] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = e.tp.Topic, e.ps.target.TopicID
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = e.tp.Partition
		p.CurrentLeaderEpoch = e.ps.target.LeaderEpoch
		p.FetchOffset = e.offset
		p.LastFetchedEpoch = -1
		p.LogStartOffset = e.ps.target.Partition.LogStartOffset()
		p.PartitionMaxBytes = f.cfg.MaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		asked[e.tp] = e
	}
	resp, err := f.send(req)
	if err != nil {
		return
	}
	r := resp.(*kmsg.FetchResponse)
	if r.ErrorCode != 0 {
		f.log.Warn("replica fetcher: fetch refused; backing off", "err", kerr.ErrorForCode(r.ErrorCode))
		f.sleep(f.cfg.Backoff, false)
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
			if f.current(tp, e.ps, fetching) && e.ps.target.Partition.LogEndOffset() == e.offset {
				f.applyFetched(e, rp, now)
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
		ps.delayUntil = now.Add(f.cfg.Backoff)
	case actTruncate:
		f.log.Info("replica fetcher: log diverges from the leader; truncating", "partition", e.tp, "fetchOffset", e.offset,
			"err", kerr.ErrorForCode(rp.ErrorCode), "divergingEpoch", rp.DivergingEpoch.Epoch, "leaderLogStart", rp.LogStartOffset)
		ps.phase = truncating
		if rp.ErrorCode == kerr.OffsetOutOfRange.Code {
			if ps.oorStreak++; ps.oorStreak > 1 { // truncation did not help: do not spin
				ps.delayUntil = now.Add(f.cfg.Backoff)
			}
		}
	case actResetTo:
		f.log.Info("replica fetcher: fetch offset below the leader's log start; restarting the log there", "partition", e.tp, "fetchOffset", e.offset, "offset", off)
		if err := p.TruncateFullyAndStartAt(off); err != nil {
			f.partitionFailed(ps, now, "restarting the log failed", err)
		}
	case actAppend:
		ps.oorStreak = 0
		if err := f.appendFetched(e, rp.RecordBatches); err != nil {
			f.partitionFailed(ps, now, "append failed", err)
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

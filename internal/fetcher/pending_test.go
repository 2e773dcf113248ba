package fetcher

import (
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// answer adds tp's answer to a fetch response.
func answer(r *kmsg.FetchResponse, tp kafka.TopicPartition, code int16, hw int64, records []byte) {
	if len(r.Topics) == 0 || r.Topics[len(r.Topics)-1].Topic != tp.Topic {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = tp.Topic
		r.Topics = append(r.Topics, t)
	}
	p := kmsg.NewFetchResponseTopicPartition()
	p.Partition, p.ErrorCode, p.HighWatermark, p.RecordBatches = tp.Partition, code, hw, records
	r.Topics[len(r.Topics)-1].Partitions = append(r.Topics[len(r.Topics)-1].Partitions, p)
}

// roundTPs lists the partitions a fetch round upserts and forgets.
func roundTPs(fr *fetchRound) (up, forgot []int32) {
	up = tps(fr.upserts)
	for _, tp := range fr.forgets {
		forgot = append(forgot, tp.Partition)
	}
	slices.Sort(forgot)
	return up, forgot
}

// The follower's bookkeeping between rounds, without I/O: an answer that
// only carries a high watermark (what a leader sends about every partition
// new to the session) queues nothing for the next request; one that appends
// queues its partition alone, listed at its new offset; a
// FENCED_LEADER_EPOCH answer takes the partition out of the session, and
// nothing brings it back but a re-target, even with the same target.
func TestAnswersQueueOnlyWhatMoved(t *testing.T) {
	f := newFetcher(Config{NodeID: followerID}.withDefaults(), fetcherKey{leader: 1})
	logs := map[int32]*fakeLog{}
	for i := range int32(4) {
		logs[i] = &fakeLog{}
		f.add(target(tpN(i), 1, 1, logs[i]))
	}
	now := time.Now()
	trunc, fr, _ := f.plan(now) // no epoch, empty: nothing to truncate
	if up, _ := roundTPs(fr); len(trunc) != 0 || !slices.Equal(up, []int32{0, 1, 2, 3}) || fr.req.SessionEpoch != 0 {
		t.Fatalf("opening round: %d to truncate, upserts %v, session epoch %d", len(trunc), up, fr.req.SessionEpoch)
	}
	r := kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	for i := range int32(4) {
		answer(r, tpN(i), 0, 0, nil)
	}
	f.applyFetch(fr, r, now)
	if len(f.pending) != 0 {
		t.Fatalf("answers with a high watermark alone queued %d partitions", len(f.pending))
	}

	_, fr, _ = f.plan(now)
	if up, forgot := roundTPs(fr); len(up)+len(forgot) != 0 || fr.req.SessionID != 9 || fr.req.SessionEpoch != 1 {
		t.Fatalf("idle incremental round: upserts %v forgets %v, session %d/%d", up, forgot, fr.req.SessionID, fr.req.SessionEpoch)
	}
	r = kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	answer(r, tpN(1), 0, 0, nil)
	answer(r, tpN(2), 0, 1, batch(0, 1, "a"))
	answer(r, tpN(3), kerr.FencedLeaderEpoch.Code, -1, nil)
	f.applyFetch(fr, r, now)
	if logs[2].LogEndOffset() != 1 {
		t.Fatalf("partition 2 not appended: LEO %d", logs[2].LogEndOffset())
	}

	_, fr, _ = f.plan(now)
	up, forgot := roundTPs(fr)
	if !slices.Equal(up, []int32{2}) || !slices.Equal(forgot, []int32{3}) || fr.req.SessionEpoch != 2 {
		t.Fatalf("after an append and a fence: upserts %v forgets %v (session epoch %d), want [2] and [3]", up, forgot, fr.req.SessionEpoch)
	}
	if off := fr.upserts[0].part.offset; off != 1 {
		t.Fatalf("partition 2 listed at %d, want its new log end 1", off)
	}
	r = kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	f.applyFetch(fr, r, now)

	later := now.Add(time.Hour) // far past any backoff
	if _, fr, _ = f.plan(later); len(fr.upserts)+len(fr.forgets) != 0 {
		t.Fatalf("the fenced partition came back without a re-target: %v", fr.upserts)
	}
	f.add(target(tpN(3), 1, 1, logs[3]))
	if _, fr, _ = f.plan(later); !slices.Equal(tps(fr.upserts), []int32{3}) {
		t.Fatalf("re-targeted fenced partition: upserts %v, want [3]", tps(fr.upserts))
	}
}

// The work lists across re-targets, delays and removals: a partition removed
// and re-added before the next request is upserted (its new state), not
// forgotten; one refused is forgotten, then listed again once its delay
// ends; one removed is forgotten once; and the lists drain.
func TestWorkListsAcrossRetargets(t *testing.T) {
	f := newFetcher(Config{NodeID: followerID}.withDefaults(), fetcherKey{leader: 1})
	logs := []*fakeLog{{}, {}, {}}
	f.addAll([]Target{target(tpN(0), 1, 1, logs[0]), target(tpN(1), 1, 1, logs[1]), target(tpN(2), 1, 1, logs[2])})
	now := time.Now()
	_, fr, _ := f.plan(now)
	r := kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	f.applyFetch(fr, r, now)

	f.removeAll([]kafka.TopicPartition{tpN(0)})
	f.addAll([]Target{target(tpN(0), 1, 2, logs[0])})
	_, fr, _ = f.plan(now)
	if up, forgot := roundTPs(fr); !slices.Equal(up, []int32{0}) || len(forgot) != 0 || fr.upserts[0].part.leaderEpoch != 2 {
		t.Fatalf("re-added partition: upserts %v forgets %v", up, forgot)
	}
	r = kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	answer(r, tpN(1), kerr.UnknownTopicOrPartition.Code, -1, nil)
	f.applyFetch(fr, r, now)

	_, fr, wait := f.plan(now)
	if up, forgot := roundTPs(fr); len(up) != 0 || !slices.Equal(forgot, []int32{1}) || wait != firstRetry {
		t.Fatalf("refused partition: upserts %v forgets %v, wait %v", up, forgot, wait)
	}
	f.applyFetch(fr, kmsg.NewPtrFetchResponse(), now)
	f.removeAll([]kafka.TopicPartition{tpN(2)})
	_, fr, _ = f.plan(now.Add(time.Second))
	if up, forgot := roundTPs(fr); !slices.Equal(up, []int32{1}) || !slices.Equal(forgot, []int32{2}) {
		t.Fatalf("delay over, 2 removed: upserts %v forgets %v, want [1] and [2]", up, forgot)
	}
	f.applyFetch(fr, kmsg.NewPtrFetchResponse(), now)
	if _, fr, _ = f.plan(now.Add(time.Second)); len(fr.upserts)+len(fr.forgets) != 0 {
		t.Fatalf("nothing changed, yet: upserts %v forgets %v", tps(fr.upserts), fr.forgets)
	}
	if len(f.pending)+len(f.forgot)+len(f.delayed)+len(f.truncs) != 0 || f.sess.sent.len() != 2 {
		t.Fatalf("lists not drained: %d pending %d forgot %d delayed %d truncating; session holds %d",
			len(f.pending), len(f.forgot), len(f.delayed), len(f.truncs), f.sess.sent.len())
	}
}

// A request lists each topic once, with its own partitions, when the
// changes queued name a topic in two runs (a0, b0, a1): the partitions of
// a run share an array with the next run's, which a later run of the same
// topic must not write into.
func TestRequestTopicsFromInterleavedRuns(t *testing.T) {
	f := newFetcher(Config{NodeID: followerID}.withDefaults(), fetcherKey{leader: 1})
	tp := func(topic string, p int32) kafka.TopicPartition {
		return kafka.TopicPartition{Topic: topic, Partition: p}
	}
	f.addAll([]Target{target(tp("z", 0), 1, 1, &fakeLog{})})
	now := time.Now()
	_, fr, _ := f.plan(now)
	r := kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	f.applyFetch(fr, r, now)

	f.addAll([]Target{target(tp("a", 0), 1, 1, &fakeLog{}), target(tp("b", 0), 1, 1, &fakeLog{}), target(tp("a", 1), 1, 1, &fakeLog{})})
	_, fr, _ = f.plan(now)
	got := map[string][]int32{}
	for _, rt := range fr.req.Topics {
		if _, dup := got[rt.Topic]; dup {
			t.Fatalf("topic %s listed twice", rt.Topic)
		}
		for _, p := range rt.Partitions {
			got[rt.Topic] = append(got[rt.Topic], p.Partition)
		}
	}
	if len(got) != 2 || !slices.Equal(got["a"], []int32{0, 1}) || !slices.Equal(got["b"], []int32{0}) {
		t.Fatalf("request topics %v, want a: [0 1], b: [0]", got)
	}
}

// A follower's log start offset moved by its own retention reaches the
// leader: once told (Manager.LogStartsMoved), the fetcher lists the
// partition, at its new log start, in the next incremental request of its
// session, which otherwise carries only what the leader's answers moved
// (before, the leader never learned it, and a DeleteRecords at or below it
// waited for its low watermark until it timed out). A partition this
// broker does not follow is ignored.
func TestMovedLogStartGoesOutInNextFetch(t *testing.T) {
	m := NewManager(Config{NodeID: followerID})
	m.start = func(*fetcher) {} // driven by hand: plan and applyFetch
	t.Cleanup(m.Close)
	logs := []*fakeLog{{}, {}}
	for _, l := range logs {
		l.write(1, "a", "b", "c")
		l.setHW(3)
	}
	m.AddPartitions([]Target{target(tpN(0), 1, 1, logs[0]), target(tpN(1), 1, 1, logs[1])})
	f := m.fetchers[fetcherKey{leader: 1}]
	now := time.Now()
	f.mu.Lock()
	f.setFetching(tpN(0), f.parts.get(tpN(0)))
	f.setFetching(tpN(1), f.parts.get(tpN(1)))
	f.mu.Unlock()
	_, fr, _ := f.plan(now)
	r := kmsg.NewPtrFetchResponse()
	r.SessionID = 9
	answer(r, tpN(0), 0, 3, nil)
	answer(r, tpN(1), 0, 3, nil)
	f.applyFetch(fr, r, now)

	logs[1].RaiseLogStartOffset(2) // as retention would
	m.LogStartsMoved([]kafka.TopicPartition{tpN(1), {Topic: "other", Partition: 0}})
	_, fr, _ = f.plan(now)
	if up := tps(fr.upserts); !slices.Equal(up, []int32{1}) || fr.req.SessionEpoch != 1 {
		t.Fatalf("after partition 1's log start moved: upserts %v (session epoch %d), want [1]", up, fr.req.SessionEpoch)
	}
	if got := fr.req.Topics[0].Partitions[0].LogStartOffset; got != 2 {
		t.Fatalf("partition 1 listed with log start %d, want 2", got)
	}
}

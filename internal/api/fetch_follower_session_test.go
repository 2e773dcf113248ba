package api

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// sessionFetch is a v12 session fetch by replicaID listing offsets (partition
// 0 of each topic) and forgetting forget.
func (x *harness) sessionFetch(ctx context.Context, replicaID, sid, epoch int32, offsets map[string]int64, forget []string, maxBytes, maxWait int32) *kmsg.FetchResponse {
	x.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.SessionID, req.SessionEpoch = 12, replicaID, sid, epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, 1, maxBytes
	topics := make([]string, 0, len(offsets))
	for topic := range offsets {
		topics = append(topics, topic)
	}
	slices.Sort(topics)
	for _, topic := range topics {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offsets[topic], 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	for _, topic := range forget {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.Partitions = topic, []int32{0}
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return x.do(ctx, req).(*kmsg.FetchResponse)
}

// listed maps each topic of a fetch response to its partition 0's bytes.
func listed(r *kmsg.FetchResponse) map[string]int {
	m := map[string]int{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			m[t.Topic] = len(p.RecordBatches)
		}
	}
	return m
}

// A follower's incremental fetch that lists nothing waits, is woken by an
// append to a partition of its session, and answers with that partition
// alone; listing it at its new offset in the next incremental fetch moves
// the high watermark and completes the acks=all produce.
func TestFollowerSessionWokenByUnlistedPartition(t *testing.T) {
	x := newHarness(t)
	pa := x.lead("a", 1, []int32{1, 2}, []int32{1, 2}, 1)
	pb := x.lead("b", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	open := x.sessionFetch(ctx, 2, 0, 0, map[string]int64{"a": 0, "b": 0}, nil, 1<<20, 0)
	if open.ErrorCode != 0 || open.SessionID == 0 || len(listed(open)) != 2 {
		t.Fatalf("opening fetch: err %d session %d %v", open.ErrorCode, open.SessionID, listed(open))
	}
	sid := open.SessionID
	got := make(chan *kmsg.FetchResponse, 1)
	go func() { got <- x.sessionFetch(ctx, 2, sid, 1, nil, nil, 1<<20, 30000) }()
	select {
	case r := <-got:
		t.Fatalf("incremental fetch with nothing new answered at once: %v", listed(r))
	case <-time.After(100 * time.Millisecond):
	}
	acked := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { acked <- x.produce(ctx, "b", -1, 30000, "v") }()
	select {
	case r := <-got:
		if l := listed(r); r.ErrorCode != 0 || len(l) != 1 || l["b"] == 0 {
			t.Fatalf("woken incremental fetch: err %d %v, want b's record alone", r.ErrorCode, l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("incremental fetch not woken by the append")
	}
	if r := x.sessionFetch(ctx, 2, sid, 2, map[string]int64{"b": 1}, nil, 1<<20, 0); r.ErrorCode != 0 {
		t.Fatalf("incremental fetch at b's new offset: err %d", r.ErrorCode)
	}
	select {
	case sp := <-acked:
		if sp.ErrorCode != 0 {
			t.Fatalf("acks=all produce: %+v", sp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("acks=all produce not completed by the follower's incremental fetch")
	}
	if pb.HighWatermark() != 1 || pa.HighWatermark() != 0 {
		t.Fatalf("high watermarks a %d b %d, want 0 and 1", pa.HighWatermark(), pb.HighWatermark())
	}
}

// The fetches of a session that leave a caught-up partition out still count
// as fetches of it (Kafka reads every session partition at every fetch): a
// follower that kept fetching until just before an append is not shrunk out
// of the ISR right after it, one that stopped is once replica.lag.time.max.ms
// has passed since its last fetch.
func TestFollowerSessionIdleFetchesKeepFollowerInSync(t *testing.T) {
	x := newHarness(t)
	t0 := time.Now() // about when the partition became leader: ISR members caught up then
	var mu sync.Mutex
	now := t0
	at := func(d time.Duration) time.Time { mu.Lock(); defer mu.Unlock(); now = t0.Add(d); return now }
	x.h.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var props []replica.ISRProposal
	x.rm.SetISRProposer(func(p replica.ISRProposal) { mu.Lock(); props = append(props, p); mu.Unlock() })
	proposals := func() []replica.ISRProposal { mu.Lock(); defer mu.Unlock(); return slices.Clone(props) }
	x.lead("a", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()

	open := x.sessionFetch(ctx, 2, 0, 0, map[string]int64{"a": 0}, nil, 1<<20, 0)
	at(20 * time.Second)
	x.sessionFetch(ctx, 2, open.SessionID, 1, nil, nil, 1<<20, 0)
	at(40 * time.Second)
	x.sessionFetch(ctx, 2, open.SessionID, 2, nil, nil, 1<<20, 0)
	at(41 * time.Second)
	if sp := x.produce(ctx, "a", 1, 1000, "v"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	x.rm.ShrinkISRs(t0.Add(45 * time.Second))
	if p := proposals(); len(p) != 0 {
		t.Fatalf("follower that fetched 5s ago proposed out of the ISR: %+v", p)
	}
	x.rm.ShrinkISRs(t0.Add(71 * time.Second))
	if p := proposals(); len(p) != 1 || !slices.Equal(p[0].NewISR, []int32{1}) {
		t.Fatalf("follower silent for 31s: proposals %+v, want the ISR without it", p)
	}
}

// A partition left without records because the response was full is read
// again at the next incremental fetch, though nothing changed for it.
func TestFollowerSessionRetriesPartitionsCutByMaxBytes(t *testing.T) {
	x := newHarness(t)
	x.lead("a", 1, []int32{1, 2}, []int32{1, 2}, 1)
	x.lead("b", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	for _, topic := range []string{"a", "b"} {
		if sp := x.produce(ctx, topic, 1, 1000, "v"); sp.ErrorCode != 0 {
			t.Fatalf("produce: %+v", sp)
		}
	}
	open := x.sessionFetch(ctx, 2, 0, 0, map[string]int64{"a": 0, "b": 0}, nil, 1, 0)
	if l := listed(open); l["a"] == 0 || l["b"] != 0 {
		t.Fatalf("opening fetch with MaxBytes 1: %v, want a's batch only (KIP-74)", l)
	}
	next := x.sessionFetch(ctx, 2, open.SessionID, 1, map[string]int64{"a": 1}, nil, 1<<20, 0)
	if l := listed(next); l["b"] == 0 {
		t.Fatalf("incremental fetch after the cut: %v, want b's batch", l)
	}
}

// A follower session's incremental fetch reads only the partitions marked
// dirty (changed by the request or by an event); a consumer session reads
// all of them, as Kafka does.
func TestFollowerSessionReadsOnlyDirty(t *testing.T) {
	for _, replicaID := range []int32{2, -1} {
		s := newFetchSession(7, replicaID)
		var parts []*sessPart
		for i := range int32(3) {
			sp, isNew := s.upsert(fetchPart{key: kafka.TopicPartition{Topic: "t", Partition: i}, maxBytes: 1})
			if !isNew {
				t.Fatal("new partition not reported new")
			}
			parts = append(parts, sp)
		}
		fc := &fetchCtx{sess: s, incremental: true}
		if got := fc.toRead(0); len(got) != 3 {
			t.Fatalf("replica %d: first read after the upserts: %d partitions, want 3", replicaID, len(got))
		}
		parts[1].PartitionChanged(false)
		s.upsert(fetchPart{key: kafka.TopicPartition{Topic: "t", Partition: 2}, maxBytes: 1}) // unchanged: not dirty
		got := fc.toRead(0)
		if replicaID >= 0 && (len(got) != 1 || got[0] != parts[1]) {
			t.Fatalf("follower session reads %d partitions, want partition 1 alone", len(got))
		}
		if replicaID < 0 && len(got) != 3 {
			t.Fatalf("consumer session reads %d partitions, want 3", len(got))
		}
	}
}

// The session cache privileges follower sessions: a new follower session
// evicts consumer sessions first, a new consumer session never evicts a
// follower one. A session in use refuses a second fetch.
func TestFetchSessionCachePolicy(t *testing.T) {
	c := newFetchSessions(2, time.Now)
	s1 := c.create(-1)
	c.done(s1)
	s2 := c.create(-1)
	c.done(s2)
	f1 := c.create(5)
	c.done(f1)
	if _, err := c.lookup(s1.id, 1); err != kerr.FetchSessionIDNotFound {
		t.Fatalf("oldest consumer session after a follower one opened: %v, want evicted", err)
	}
	f2 := c.create(6)
	c.done(f2)
	if _, err := c.lookup(s2.id, 1); err != kerr.FetchSessionIDNotFound {
		t.Fatalf("consumer session with followers needing slots: %v, want evicted", err)
	}
	if s3 := c.create(-1); s3 != nil {
		t.Fatal("a consumer session evicted a follower session")
	}
	f3 := c.create(7)
	c.done(f3)
	if _, err := c.lookup(f1.id, 1); err != kerr.FetchSessionIDNotFound {
		t.Fatalf("oldest follower session when only followers hold slots: %v, want evicted", err)
	}

	s, err := c.lookup(f2.id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.lookup(f2.id, 2); err != kerr.InvalidFetchSessionEpoch {
		t.Fatalf("second fetch while the session is in use: %v, want INVALID_FETCH_SESSION_EPOCH", err)
	}
	c.done(s)
	if _, err := c.lookup(f2.id, 2); err != nil {
		t.Fatalf("next epoch once done: %v", err)
	}
}

// A caught-up follower whose ISR expansion the controller refused is not
// proposed again at each fetch of its idle session (that would loop as fast
// as the controller answers), but at the session's next sweep.
func TestFollowerSessionSweepProposesRefusedExpansionAgain(t *testing.T) {
	x := newHarness(t)
	t0 := time.Now()
	var mu sync.Mutex
	now := t0
	at := func(d time.Duration) { mu.Lock(); now = t0.Add(d); mu.Unlock() }
	x.h.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var props []replica.ISRProposal
	x.rm.SetISRProposer(func(p replica.ISRProposal) { mu.Lock(); props = append(props, p); mu.Unlock() })
	proposals := func() []replica.ISRProposal { mu.Lock(); defer mu.Unlock(); return slices.Clone(props) }
	p := x.lead("a", 1, []int32{1, 2}, []int32{1}, 1)
	ctx := context.Background()

	open := x.sessionFetch(ctx, 2, 0, 0, map[string]int64{"a": 0}, nil, 1<<20, 0)
	got := proposals()
	if len(got) != 1 || !slices.Equal(got[0].NewISR, []int32{1, 2}) {
		t.Fatalf("caught-up follower: proposals %+v, want the ISR with it", got)
	}
	p.ApplyISRResult(got[0], replica.ISRResult{ErrorCode: kerr.IneligibleReplica.Code})
	epoch := int32(1)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
		at(d)
		x.sessionFetch(ctx, 2, open.SessionID, epoch, nil, nil, 1<<20, 0)
		epoch++
	}
	if n := len(proposals()); n != 1 {
		t.Fatalf("%d proposals within the sweep interval after a refusal, want 1", n)
	}
	at(sessionSweepInterval + time.Second)
	x.sessionFetch(ctx, 2, open.SessionID, epoch, nil, nil, 1<<20, 0)
	if got := proposals(); len(got) != 2 || !slices.Equal(got[1].NewISR, []int32{1, 2}) {
		t.Fatalf("after the sweep: proposals %+v, want the expansion again", got)
	}
}

// A move of the high watermark alone does not answer a follower's parked
// fetch (its MinBytes is not reached), but the answer it gets when MaxWait
// ends carries the new high watermark.
func TestFollowerSessionGetsNewHighWatermarkAtTimeout(t *testing.T) {
	x := newHarness(t)
	x.lead("a", 1, []int32{1, 2, 3}, []int32{1, 2, 3}, 1)
	ctx := context.Background()
	s2 := x.sessionFetch(ctx, 2, 0, 0, map[string]int64{"a": 0}, nil, 1<<20, 0).SessionID
	s3 := x.sessionFetch(ctx, 3, 0, 0, map[string]int64{"a": 0}, nil, 1<<20, 0).SessionID
	if sp := x.produce(ctx, "a", 1, 1000, "v"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	x.sessionFetch(ctx, 2, s2, 1, map[string]int64{"a": 1}, nil, 1<<20, 0)
	got := make(chan *kmsg.FetchResponse, 1)
	go func() { got <- x.sessionFetch(ctx, 2, s2, 2, nil, nil, 1<<20, 300) }()
	time.Sleep(50 * time.Millisecond)
	x.sessionFetch(ctx, 3, s3, 1, map[string]int64{"a": 1}, nil, 1<<20, 0) // the HW moves to 1
	select {
	case r := <-got:
		if len(r.Topics) != 1 || r.Topics[0].Partitions[0].HighWatermark != 1 {
			t.Fatalf("follower 2's fetch after the HW moved: %+v, want a with HW 1", r.Topics)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parked fetch never answered")
	}
}

package api

// The partition side of transactions through the handler: Produce of
// transactional batches (KIP-890 part 1 verification), WriteTxnMarkers,
// read_committed Fetch and ListOffsets.

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// txnBatch is a transactional batch of vals of producer pid.
func txnBatch(pid int64, epoch int16, seq int32, vals ...string) []byte {
	b := idemBatch(pid, epoch, seq, vals...)
	b[22] |= 0x10 // attributes low byte: transactional
	record.SetCRC(b)
	return b
}

// produceTxn sends one batch to partition 0 of topic under the
// transactional id txnID (nil: none).
func (x *harness) produceTxn(topic string, txnID *string, b []byte) kmsg.ProduceResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis, req.TransactionID = 9, 1, 1000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = b
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return x.do(context.Background(), req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// markers sends one WriteTxnMarkers for producer pid to partition 0 of
// each topic and returns the codes by topic.
func (x *harness) markers(ctx context.Context, pid int64, epoch int16, coordEpoch int32, commit bool, topics ...string) map[string]int16 {
	x.t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed = pid, epoch, coordEpoch, commit
	for _, topic := range topics {
		t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		t.Topic, t.Partitions = topic, []int32{0}
		m.Topics = append(m.Topics, t)
	}
	req.Markers = append(req.Markers, m)
	resp := x.do(ctx, req).(*kmsg.WriteTxnMarkersResponse)
	out := map[string]int16{}
	if len(resp.Markers) != 1 || resp.Markers[0].ProducerID != pid {
		x.t.Fatalf("markers response %+v", resp)
	}
	for _, t := range resp.Markers[0].Topics {
		for _, p := range t.Partitions {
			out[t.Topic] = p.ErrorCode
		}
	}
	return out
}

// fetchIsolated is a consumer's sessionless fetch of partition 0 of topic
// at the isolation level.
func (x *harness) fetchIsolated(topic string, isolation int8, offset int64) kmsg.FetchResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.IsolationLevel = 11, -1, 1<<20, isolation
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return x.do(context.Background(), req).(*kmsg.FetchResponse).Topics[0].Partitions[0]
}

func listOffsetIsolated(x *harness, topic string, isolation int8) kmsg.ListOffsetsResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID, req.IsolationLevel = 8, -1, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return x.do(context.Background(), req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

// batchEnds lists the last offset of each batch returned.
func batchEnds(t *testing.T, records []byte) []int64 {
	t.Helper()
	var out []int64
	for len(records) > 0 {
		h, err := record.ReadHeader(records)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.LastOffset())
		records = records[h.Size():]
	}
	return out
}

var txnID = func() *string { s := "tx"; return &s }()

func TestReadCommittedFetch(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1}, []int32{1}, 1)
	if r := x.produceTxn("t", txnID, txnBatch(5, 0, 0, "a0", "a1")); r.ErrorCode != 0 || r.BaseOffset != 0 { // 0..1, aborted later
		t.Fatalf("transactional produce: %+v", r)
	}
	x.produceTxn("t", txnID, txnBatch(6, 0, 0, "c0"))      // 2, committed later
	x.produce(context.Background(), "t", 1, 1000, "plain") // 3

	f := x.fetchIsolated("t", 1, 0)
	if f.ErrorCode != 0 || f.HighWatermark != 4 || f.LastStableOffset != 0 || len(f.RecordBatches) != 0 ||
		f.AbortedTransactions == nil || len(f.AbortedTransactions) != 0 {
		t.Fatalf("read_committed with open transactions: %+v", f)
	}
	if lo := listOffsetIsolated(x, "t", 1); lo.ErrorCode != 0 || lo.Offset != 0 {
		t.Fatalf("ListOffsets read_committed latest: %+v, want the LSO 0", lo)
	}
	if lo := listOffsetIsolated(x, "t", 0); lo.Offset != 4 {
		t.Fatalf("ListOffsets read_uncommitted latest: %+v, want the HW 4", lo)
	}
	d := x.do(context.Background(), &kmsg.DescribeProducersRequest{Topics: []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0}}}}).(*kmsg.DescribeProducersResponse)
	if ps := d.Topics[0].Partitions[0].ActiveProducers; len(ps) != 2 || ps[0].CurrentTxnStartOffset != 0 || ps[1].CurrentTxnStartOffset != 2 {
		t.Fatalf("DescribeProducers: %+v", ps)
	}

	if codes := x.markers(context.Background(), 5, 0, 0, false, "t"); codes["t"] != 0 { // abort at 4
		t.Fatalf("abort marker: %v", codes)
	}
	f = x.fetchIsolated("t", 1, 0)
	if f.LastStableOffset != 2 || !equalInts(batchEnds(t, f.RecordBatches), []int64{1}) {
		t.Fatalf("after the abort: LSO %d, batches ending %v; want 2 and [1]", f.LastStableOffset, batchEnds(t, f.RecordBatches))
	}
	if len(f.AbortedTransactions) != 1 || f.AbortedTransactions[0].ProducerID != 5 || f.AbortedTransactions[0].FirstOffset != 0 {
		t.Fatalf("aborted transactions %+v, want producer 5 from 0", f.AbortedTransactions)
	}
	if codes := x.markers(context.Background(), 6, 0, 0, true, "t"); codes["t"] != 0 { // commit at 5
		t.Fatalf("commit marker: %v", codes)
	}
	// The markers, stamped with the wall clock, rolled a segment (the data
	// carries timestamps of 1970): a fetch reads one segment.
	f = x.fetchIsolated("t", 1, 2)
	if f.LastStableOffset != 6 || f.HighWatermark != 6 || !equalInts(batchEnds(t, f.RecordBatches), []int64{2, 3}) {
		t.Fatalf("after the commit: LSO %d, batches ending %v", f.LastStableOffset, batchEnds(t, f.RecordBatches))
	}
	if len(f.AbortedTransactions) != 1 || f.AbortedTransactions[0].ProducerID != 5 {
		t.Fatalf("fetch from 2 overlaps producer 5's aborted transaction (0..4): %+v", f.AbortedTransactions)
	}
	f = x.fetchIsolated("t", 1, 4)
	if !equalInts(batchEnds(t, f.RecordBatches), []int64{4, 5}) || len(f.AbortedTransactions) != 1 {
		t.Fatalf("fetch from 4: batches ending %v, aborted %+v", batchEnds(t, f.RecordBatches), f.AbortedTransactions)
	}
	if f = x.fetchIsolated("t", 1, 5); len(f.AbortedTransactions) != 0 {
		t.Fatalf("fetch from 5 (past the abort marker): aborted %+v", f.AbortedTransactions)
	}
	if lo := listOffsetIsolated(x, "t", 1); lo.Offset != 6 {
		t.Fatalf("ListOffsets read_committed latest: %+v, want 6", lo)
	}
	u := x.fetchIsolated("t", 0, 0)
	if u.AbortedTransactions != nil || u.LastStableOffset != 6 || len(batchEnds(t, u.RecordBatches)) != 3 {
		t.Fatalf("read_uncommitted: aborted %v, LSO %d", u.AbortedTransactions, u.LastStableOffset)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWriteTxnMarkersErrors(t *testing.T) {
	x := newHarness(t)
	ctx := context.Background()
	x.lead("t", 1, []int32{1}, []int32{1}, 1)
	x.lead(OffsetsTopic, 1, []int32{1}, []int32{1}, 1)
	x.become("f", replica.Follower, 2, 1, []int32{1, 2}, []int32{1, 2}, 1) // a follower here
	x.lead("m", 1, []int32{1, 2}, []int32{1}, 2)                           // ISR below min.insync.replicas
	x.produceTxn("t", txnID, txnBatch(5, 3, 0, "a"))

	codes := x.markers(ctx, 5, 3, 7, true, "t", "nope", OffsetsTopic, "f", "m")
	want := map[string]int16{
		"t":          0,
		"nope":       kerr.UnknownTopicOrPartition.Code,
		OffsetsTopic: 0, // internal topics are allowed
		"f":          kerr.NotLeaderForPartition.Code,
		"m":          kerr.NotEnoughReplicas.Code,
	}
	for topic, code := range want {
		if codes[topic] != code {
			t.Errorf("%s: code %d, want %d", topic, codes[topic], code)
		}
	}
	if c := x.markers(ctx, 5, 3, 6, false, "t")["t"]; c != kerr.TransactionCoordinatorFenced.Code {
		t.Errorf("older coordinator epoch: %d", c)
	}
	if c := x.markers(ctx, 5, 2, 8, false, "t")["t"]; c != kerr.InvalidProducerEpoch.Code {
		t.Errorf("older producer epoch: %d", c)
	}
	// Partition 1 of "t" exists but is hosted elsewhere.
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.Topics = 5, []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t", Partitions: []int32{1}}}
	req.Markers = append(req.Markers, m)
	if c := x.do(ctx, req).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode; c != kerr.NotLeaderForPartition.Code {
		t.Errorf("partition led elsewhere: %d", c)
	}
}

// A marker is answered once the followers have it, as acks=all.
func TestWriteTxnMarkersWaitForHW(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	x.produceTxn("t", txnID, txnBatch(5, 0, 0, "a")) // waits for no follower: acks -1 with timeout
	x.fetch(ctx, 12, "t", 2, 1, 0)
	done := make(chan map[string]int16, 1)
	go func() { done <- x.markers(ctx, 5, 0, 0, true, "t") }()
	await(t, "the marker appended", func() bool { return p.LogEndOffset() == 2 })
	select {
	case c := <-done:
		t.Fatalf("answered before the follower has the marker: %v", c)
	default:
	}
	x.fetch(ctx, 12, "t", 2, 2, 0)
	if c := <-done; c["t"] != 0 {
		t.Fatalf("marker: %v", c)
	}
}

// fakeVerifier answers code and counts its calls; during, if set, runs
// while the coordinator is being asked.
type fakeVerifier struct {
	code   int16
	calls  int
	during func()
}

func (v *fakeVerifier) VerifyPartition(_ context.Context, id string, _ int64, _ int16, _ kafka.TopicPartition) int16 {
	v.calls++
	if v.during != nil {
		v.during()
	}
	return v.code
}

func TestProduceTransactionalRules(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1}, []int32{1}, 1)
	v := &fakeVerifier{code: kerr.InvalidTxnState.Code}
	x.h.TxnVerifier = v

	control := record.BuildMarker(record.Marker{ProducerID: 5, Commit: true}, 1000)
	noPID := recordtest.Values(1000, "x")
	noPID[22] |= 0x10
	record.SetCRC(noPID)
	cases := []struct {
		name  string
		id    *string
		batch []byte
		code  int16
	}{
		{"control batch from a client", txnID, control, kerr.InvalidRecord.Code},
		{"transactional without a producer id", txnID, noPID, kerr.InvalidRecord.Code},
		{"transactional without a transactional id", nil, txnBatch(5, 0, 0, "x"), kerr.TransactionalIDAuthorizationFailed.Code},
		{"partition not in the transaction", txnID, txnBatch(5, 0, 0, "x"), kerr.InvalidTxnState.Code},
	}
	for _, c := range cases {
		if r := x.produceTxn("t", c.id, c.batch); r.ErrorCode != c.code {
			t.Errorf("%s: code %d, want %d", c.name, r.ErrorCode, c.code)
		}
	}
	if p.LogEndOffset() != 0 || v.calls != 1 {
		t.Fatalf("LEO %d after refusals, verifier called %d times", p.LogEndOffset(), v.calls)
	}
	v.code = 0
	if r := x.produceTxn("t", txnID, txnBatch(5, 0, 0, "x")); r.ErrorCode != 0 {
		t.Fatalf("verified: %d", r.ErrorCode)
	}
	if r := x.produceTxn("t", txnID, txnBatch(5, 0, 1, "y")); r.ErrorCode != 0 || v.calls != 2 {
		t.Fatalf("second batch of an open transaction: code %d, %d verifications (want none more)", r.ErrorCode, v.calls)
	}
	if r := x.produceOne("t", 1, 1000, idemBatch(5, 0, 2, "z")); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("non-transactional batch in an open transaction: code %d", r.ErrorCode)
	}

	// The transaction ends (its timeout's ABORT) while the coordinator is
	// asked: the late batch must not open a transaction nobody ends.
	v.during = func() {
		if codes := x.markers(context.Background(), 7, 0, 0, false, "t"); codes["t"] != 0 {
			t.Errorf("marker: %v", codes)
		}
	}
	leo := p.LogEndOffset()
	if r := x.produceTxn("t", txnID, txnBatch(7, 0, 0, "late")); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("batch verified before a marker: code %d", r.ErrorCode)
	}
	if p.LogEndOffset() != leo+1 || p.HasOpenTxn(7) {
		t.Fatalf("LEO %d (want the marker alone at %d), open %v", p.LogEndOffset(), leo, p.HasOpenTxn(7))
	}
}

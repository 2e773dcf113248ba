package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/txn"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// txnMemLog is a txn.Log whose writes are replicated at once.
type txnMemLog struct {
	mu   sync.Mutex
	recs []record.KV
}

func (l *txnMemLog) Append(_ int32, batch []byte) (func(context.Context) error, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := record.Records(batch, func(r record.Record) bool {
		l.recs = append(l.recs, record.KV{Key: r.Key, Value: r.Value})
		return true
	})
	return func(context.Context) error { return nil }, 0, err
}

func (l *txnMemLog) Load(context.Context, int32, func(int64, []byte, []byte)) error { return nil }

// instantMarkers writes every marker at once.
type instantMarkers struct{}

func (instantMarkers) Write(_ context.Context, job txn.MarkerJob, written func(kafka.TopicPartition)) error {
	for _, tp := range job.Partitions {
		written(tp)
	}
	return nil
}

// txnHandler is a Handler whose transaction coordinator leads the one
// __transaction_state partition, over topic "t" (two partitions).
func txnHandler(t *testing.T) (*Handler, *txn.Coordinator) {
	t.Helper()
	cfg, _, err := config.Load(map[string]string{"broker.id": "1", "log.dirs": t.TempDir(), "transaction.max.timeout.ms": "60000"})
	if err != nil {
		t.Fatal(err)
	}
	var next int64 = 41
	c := txn.NewCoordinator(txn.Config{Partitions: 1, MaxTimeout: time.Minute, Log: &txnMemLog{}, Markers: instantMarkers{},
		ProducerID: func(context.Context) (int64, error) { next++; return next, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	c.BecomeLeader(0, 1)
	for {
		if _, err := c.List(txn.Filter{}); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	meta := &fakeMeta{topics: map[string]TopicInfo{"t": {Name: "t", Partitions: []PartitionInfo{{ID: 0, Leader: self}, {ID: 1, Leader: self}}}}}
	return New(Config{NodeID: self, Broker: cfg, Meta: meta, Txns: c}), c
}

func serve[R kmsg.Response](t *testing.T, h *Handler, req kmsg.Request) R {
	t.Helper()
	resp, err := h.Handle(context.Background(), nil, wire.RequestHeader{Key: req.Key(), Version: req.GetVersion()}, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(R)
}

func initTxn(t *testing.T, h *Handler, version int16, id string, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = version, &id, 10000, pid, epoch
	return serve[*kmsg.InitProducerIDResponse](t, h, req)
}

func addParts(t *testing.T, h *Handler, version int16, id string, pid int64, epoch int16, topic string, parts ...int32) map[int32]int16 {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = version, id, pid, epoch
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	if topic != "t" || len(parts) > 0 {
		req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}, {Topic: topic, Partitions: parts}}
	}
	out := map[int32]int16{}
	for _, rt := range serve[*kmsg.AddPartitionsToTxnResponse](t, h, req).Topics {
		for _, p := range rt.Partitions {
			if rt.Topic != "t" || p.Partition != 0 {
				out[100+p.Partition] = p.ErrorCode
			} else {
				out[p.Partition] = p.ErrorCode
			}
		}
	}
	return out
}

func endTxn(t *testing.T, h *Handler, version int16, id string, pid int64, epoch int16, commit bool) int16 {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, id, pid, epoch, commit
	return serve[*kmsg.EndTxnResponse](t, h, req).ErrorCode
}

func TestTxnAPIs(t *testing.T) {
	h, c := txnHandler(t)
	r := initTxn(t, h, 4, "tx", -1, -1)
	if r.ErrorCode != 0 || r.ProducerID != 42 || r.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %+v", r)
	}
	// KIP-360 from an old client (v3): a wrong epoch is fenced, as INVALID_PRODUCER_EPOCH.
	if r := initTxn(t, h, 3, "tx", 42, 5); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("v3 fenced: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := initTxn(t, h, 4, "tx", 42, 5); r.ErrorCode != kerr.ProducerFenced.Code {
		t.Fatalf("v4 fenced: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// An unknown partition: UNKNOWN_TOPIC_OR_PARTITION, the rest not attempted.
	if got := addParts(t, h, 3, "tx", 42, 0, "t", 7); got[0] != kerr.OperationNotAttempted.Code || got[107] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: %v", got)
	}
	if got := addParts(t, h, 1, "tx", 42, 1, "t"); got[0] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("v1 fenced: %v", got)
	}
	if got := addParts(t, h, 2, "tx", 42, 1, "t"); got[0] != kerr.ProducerFenced.Code {
		t.Fatalf("v2 fenced: %v", got)
	}
	if got := addParts(t, h, 3, "tx", 43, 0, "t"); got[0] != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("other producer id: %v", got)
	}
	if got := addParts(t, h, 3, "tx", 42, 0, "t"); got[0] != 0 {
		t.Fatalf("add: %v", got)
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version, ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = 3, "tx", 42, 0, "g"
	if code := serve[*kmsg.AddOffsetsToTxnResponse](t, h, ao).ErrorCode; code != 0 {
		t.Fatalf("AddOffsetsToTxn: %v", kerr.ErrorForCode(code))
	}

	// Verify-only (v4, batched): partition 0 is in the transaction, 1 is not.
	vr := kmsg.NewPtrAddPartitionsToTxnRequest()
	vr.Version = 4
	vr.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{
		{TransactionalID: "tx", ProducerID: 42, ProducerEpoch: 0, VerifyOnly: true,
			Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t", Partitions: []int32{0, 1}}}},
		{TransactionalID: "nobody", ProducerID: 1, ProducerEpoch: 0, VerifyOnly: true,
			Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t", Partitions: []int32{0}}}},
	}
	vresp := serve[*kmsg.AddPartitionsToTxnResponse](t, h, vr)
	if len(vresp.Transactions) != 2 {
		t.Fatalf("verify: %+v", vresp)
	}
	ps := vresp.Transactions[0].Topics[0].Partitions
	if ps[0].ErrorCode != 0 || ps[1].ErrorCode != kerr.InvalidTxnState.Code {
		t.Errorf("verify tx: %+v", ps)
	}
	if code := vresp.Transactions[1].Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidProducerIDMapping.Code {
		t.Errorf("verify unknown id: %v", kerr.ErrorForCode(code))
	}

	dr := kmsg.NewPtrDescribeTransactionsRequest()
	dr.TransactionalIDs = []string{"tx", "missing", ""}
	ds := serve[*kmsg.DescribeTransactionsResponse](t, h, dr).TransactionStates
	if d := ds[0]; d.ErrorCode != 0 || d.State != "Ongoing" || d.ProducerID != 42 || d.TimeoutMillis != 10000 || len(d.Topics) != 2 ||
		d.Topics[0].Topic != OffsetsTopic || d.Topics[1].Topic != "t" || d.StartTimestamp <= 0 {
		t.Errorf("describe tx: %+v", d)
	}
	if ds[1].ErrorCode != kerr.TransactionalIDNotFound.Code || ds[2].ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Errorf("describe missing: %+v", ds[1:])
	}

	lr := kmsg.NewPtrListTransactionsRequest()
	lr.Version, lr.StateFilters = 1, []string{"Ongoing", "Bogus"}
	lres := serve[*kmsg.ListTransactionsResponse](t, h, lr)
	if lres.ErrorCode != 0 || len(lres.TransactionStates) != 1 || lres.TransactionStates[0].TransactionState != "Ongoing" ||
		len(lres.UnknownStateFilters) != 1 || lres.UnknownStateFilters[0] != "Bogus" {
		t.Errorf("list: %+v", lres)
	}
	lr.StateFilters, lr.DurationFilterMillis = nil, time.Hour.Milliseconds()
	if lres := serve[*kmsg.ListTransactionsResponse](t, h, lr); len(lres.TransactionStates) != 0 {
		t.Errorf("list by duration: %+v", lres)
	}

	if code := endTxn(t, h, 0, "tx", 42, 1, true); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("v0 fenced: %v", kerr.ErrorForCode(code))
	}
	if code := endTxn(t, h, 3, "tx", 42, 0, true); code != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(code))
	}
	for {
		if s, _ := c.Describe("tx"); s.State == txn.CompleteCommit {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if code := endTxn(t, h, 3, "tx", 42, 0, true); code != 0 {
		t.Fatalf("retried commit: %v", kerr.ErrorForCode(code))
	}
	if code := endTxn(t, h, 3, "tx", 42, 0, false); code != kerr.InvalidTxnState.Code {
		t.Fatalf("abort after commit: %v", kerr.ErrorForCode(code))
	}
}

func TestFindTxnCoordinator(t *testing.T) {
	h, _ := txnHandler(t)
	admin := &recordingAdmin{}
	h.Admin = admin
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorType, fc.CoordinatorKeys = 4, 1, []string{"tx"}
	// No brokers live in fakeMeta: the factor cannot be met, nothing is created.
	if c := serve[*kmsg.FindCoordinatorResponse](t, h, fc).Coordinators[0]; c.ErrorCode != kerr.CoordinatorNotAvailable.Code || admin.created != nil {
		t.Fatalf("too few brokers: %+v %+v", c, admin.created)
	}
	h.LowerTxnStateReplication = true
	h.Meta = &liveMeta{fakeMeta: h.Meta.(*fakeMeta)}
	if c := serve[*kmsg.FindCoordinatorResponse](t, h, fc).Coordinators[0]; c.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("creating: %+v", c)
	}
	ct := admin.created
	if ct == nil || ct.Name != TxnStateTopic || ct.NumPartitions != 50 || ct.ReplicationFactor != 1 ||
		ct.Configs["cleanup.policy"] != "compact" || ct.Configs["min.insync.replicas"] != "1" || ct.Configs["segment.bytes"] != "104857600" {
		t.Fatalf("created %+v", ct)
	}
	lm := h.Meta.(*liveMeta)
	parts := make([]PartitionInfo, 50)
	for i := range parts {
		parts[i] = PartitionInfo{ID: int32(i), Leader: self}
	}
	lm.topics[TxnStateTopic] = TopicInfo{Name: TxnStateTopic, Partitions: parts}
	if c := serve[*kmsg.FindCoordinatorResponse](t, h, fc).Coordinators[0]; c.ErrorCode != 0 || c.NodeID != self || c.Host != "h" {
		t.Fatalf("coordinator: %+v", c)
	}
}

// recordingAdmin records the topic AutoCreateTopic is asked for.
type recordingAdmin struct {
	Admin
	created *CreateTopic
}

func (a *recordingAdmin) AutoCreateTopic(_ context.Context, t CreateTopic) error {
	a.created = &t
	return nil
}

// liveMeta is fakeMeta with this broker live.
type liveMeta struct{ *fakeMeta }

func (m *liveMeta) Brokers() []BrokerInfo         { return []BrokerInfo{{ID: self, Host: "h", Port: 9092}} }
func (m *liveMeta) BrokersOn(string) []BrokerInfo { return m.Brokers() }

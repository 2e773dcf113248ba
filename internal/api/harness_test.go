package api

// A Handler on a real replica.Manager (logs in t.TempDir()) and a fake
// metadata cache: this broker is node 1, followers are driven by the test
// through follower fetches.

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
	"github.com/samsa-kafka/samsa/internal/wire"
)

const self = 1

type fakeMeta struct{ topics map[string]TopicInfo }

func (m *fakeMeta) ClusterID() string             { return "test" }
func (m *fakeMeta) ControllerID() int32           { return self }
func (m *fakeMeta) Brokers() []BrokerInfo         { return nil }
func (m *fakeMeta) BrokersOn(string) []BrokerInfo { return nil }
func (m *fakeMeta) Deleting(string) bool          { return false }

// Ready: the fake cluster is always caught up.
func (m *fakeMeta) Ready() <-chan struct{} { return closedChan }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (m *fakeMeta) Topics() []TopicInfo {
	var out []TopicInfo
	for _, t := range m.topics {
		out = append(out, t)
	}
	return out
}
func (m *fakeMeta) Topic(name string) (TopicInfo, bool) { t, ok := m.topics[name]; return t, ok }
func (m *fakeMeta) TopicByID(id [16]byte) (TopicInfo, bool) {
	for _, t := range m.topics {
		if t.ID == id {
			return t, true
		}
	}
	return TopicInfo{}, false
}

type harness struct {
	t    testing.TB
	h    *Handler
	rm   *replica.Manager
	meta *fakeMeta
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	logs, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logs.Close() })
	x := &harness{t: t, rm: replica.NewManager(logs), meta: &fakeMeta{topics: map[string]TopicInfo{}}}
	x.h = New(Config{NodeID: self, Meta: x.meta, Partitions: x.rm})
	return x
}

// become installs a controller decision for partition 0 of topic (a
// two-partition topic in the metadata; partition 1 is hosted nowhere).
func (x *harness) become(topic string, role replica.Role, leader, epoch int32, replicas, isr []int32, minISR int) *replica.Partition {
	x.t.Helper()
	id := [16]byte{byte(len(topic)), topic[0]}
	cfg := replica.Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20, MinInsyncReplicas: minISR}
	st := replica.State{Role: role, Leader: leader, LeaderEpoch: epoch, PartitionEpoch: epoch, Replicas: replicas, ISR: isr}
	p, err := x.rm.Become(kafka.TopicPartition{Topic: topic, Partition: 0}, id, cfg, st)
	if err != nil {
		x.t.Fatal(err)
	}
	x.meta.topics[topic] = TopicInfo{Name: topic, ID: id, Partitions: []PartitionInfo{
		{ID: 0, Leader: leader, LeaderEpoch: epoch, Replicas: replicas, ISR: isr},
		{ID: 1, Leader: 2, Replicas: []int32{2}, ISR: []int32{2}},
	}}
	return p
}

// configure changes p's configuration with edit, as a config change does.
func configure(p *replica.Partition, edit func(*replica.Config)) {
	cfg := p.Config()
	edit(&cfg)
	p.SetConfig(cfg)
}

func (x *harness) lead(topic string, epoch int32, replicas, isr []int32, minISR int) *replica.Partition {
	x.t.Helper()
	return x.become(topic, replica.Leader, self, epoch, replicas, isr, minISR)
}

// do serves req as if read from a connection whose context is ctx.
func (x *harness) do(ctx context.Context, req kmsg.Request) kmsg.Response {
	x.t.Helper()
	resp, err := x.h.Handle(ctx, nil, wire.RequestHeader{Key: req.Key(), Version: req.GetVersion()}, req)
	if err != nil {
		x.t.Error(err) // not Fatal: some tests call it from a goroutine
	}
	return resp
}

// produceReq is one batch of vals for partition 0 of topic, timestamps
// 1000, 1001, ...
func produceReq(topic string, acks int16, timeoutMillis int32, vals ...string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, acks, timeoutMillis
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = recordtest.Values(1000, vals...)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produce sends one batch of vals to partition 0 of topic.
func (x *harness) produce(ctx context.Context, topic string, acks int16, timeoutMillis int32, vals ...string) kmsg.ProduceResponseTopicPartition {
	x.t.Helper()
	resp := x.do(ctx, produceReq(topic, acks, timeoutMillis, vals...))
	if resp == nil {
		x.t.Error("produce: no response")
		return kmsg.ProduceResponseTopicPartition{ErrorCode: -2}
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// fetch is a sessionless fetch of partition 0 of topic by replicaID (-1 for
// a consumer), at v12 (ReplicaID field) or v15+ (ReplicaState).
func (x *harness) fetch(ctx context.Context, version int16, topic string, replicaID int32, offset int64, maxWaitMillis int32) kmsg.FetchResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = version, maxWaitMillis, 1, 1<<20
	if version >= 15 {
		req.ReplicaState.ID = replicaID
	} else {
		req.ReplicaID = replicaID
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, x.meta.topics[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := x.do(ctx, req).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		x.t.Fatalf("fetch response %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// await waits (boundedly) for cond.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

package broker

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// TestAddPartitions grows a topic through kadm and sees the new partitions
// led and writable; shrinking, not growing, unknown topics, validateOnly
// and manual assignments answer Kafka's codes.
func TestAddPartitions(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(t, cl, "grow", 1, nil)
	id := topicID(t, cl, "grow")

	rs, err := adm.UpdatePartitions(ctx, 3, "grow")
	if err != nil || rs["grow"].Err != nil {
		t.Fatalf("grow 1 -> 3: %v %v %s", err, rs["grow"].Err, rs["grow"].ErrMessage)
	}
	// The handler waited for leaders: the very next metadata shows them.
	td, err := adm.ListTopics(ctx, "grow")
	if err != nil {
		t.Fatal(err)
	}
	d := td["grow"]
	if d.ID != id || len(d.Partitions) != 3 {
		t.Fatalf("after grow: id %v (was %v), %d partitions", d.ID, id, len(d.Partitions))
	}
	for _, p := range d.Partitions.Sorted() {
		if p.Leader != 0 || !slices.Equal(p.Replicas, []int32{0}) {
			t.Errorf("partition %d: leader %d replicas %v", p.Partition, p.Leader, p.Replicas)
		}
	}
	// The new partition takes writes.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "grow", Partition: 2, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce to new partition: %v", err)
	}

	cases := []struct {
		name   string
		topic  string
		count  int32
		assign [][]int32
		want   error
	}{
		{"shrink", "grow", 2, nil, kerr.InvalidPartitions},
		{"same count", "grow", 3, nil, kerr.InvalidPartitions},
		{"unknown topic", "nope", 4, nil, kerr.UnknownTopicOrPartition},
		{"unknown broker", "grow", 4, [][]int32{{7}}, kerr.InvalidReplicaAssignment},
		{"too few assignments", "grow", 5, [][]int32{{0}}, kerr.InvalidReplicaAssignment},
		{"wrong factor", "grow", 4, [][]int32{{0, 0}}, kerr.InvalidReplicaAssignment},
		{"manual ok", "grow", 4, [][]int32{{0}}, nil},
	}
	for _, c := range cases {
		got := createPartitions(t, b, c.topic, c.count, c.assign, false)
		if !errors.Is(got, c.want) && got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}

	// validateOnly changes nothing.
	if rs, err := adm.ValidateUpdatePartitions(ctx, 10, "grow"); err != nil || rs["grow"].Err != nil {
		t.Fatalf("validate: %v %v", err, rs["grow"].Err)
	}
	if td, _ := adm.ListTopics(ctx, "grow"); len(td["grow"].Partitions) != 4 {
		t.Fatalf("after validateOnly: %d partitions, want 4", len(td["grow"].Partitions))
	}
}

// TestCreatePartitionsDuplicateTopic: a name twice in one request is
// INVALID_REQUEST, answered once.
func TestCreatePartitionsDuplicateTopic(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b)
	createTopic(t, cl, "dup", 1, nil)
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 10000
	for range 2 {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "dup", 2
		req.Topics = append(req.Topics, rt)
	}
	resp := rawRequest(t, b.Addr().String(), req).(*kmsg.CreatePartitionsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("response: %+v", resp.Topics)
	}
	if td, _ := kadm.NewClient(cl).ListTopics(context.Background(), "dup"); len(td["dup"].Partitions) != 1 {
		t.Fatalf("duplicate request changed the topic: %d partitions", len(td["dup"].Partitions))
	}
}

// createPartitions sends one CreatePartitions request (kadm has no manual
// assignments) and returns the topic's error.
func createPartitions(t *testing.T, b *Broker, topic string, count int32, assign [][]int32, validateOnly bool) error {
	t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis, req.ValidateOnly = 10000, validateOnly
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, count
	for _, rs := range assign {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = rs
		rt.Assignment = append(rt.Assignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp := rawRequest(t, b.Addr().String(), req).(*kmsg.CreatePartitionsResponse)
	if len(resp.Topics) != 1 {
		t.Fatalf("%d topics in response", len(resp.Topics))
	}
	return kerr.ErrorForCode(resp.Topics[0].ErrorCode)
}

// TestPlanNewPartitions checks placement and Kafka's validation without a
// broker.
func TestPlanNewPartitions(t *testing.T) {
	three := metadata.Assignment{Partitions: map[int32][]int32{0: {2, 3, 1}, 1: {3, 1, 2}}}
	cases := []struct {
		name    string
		cur     metadata.Assignment
		total   int32
		manual  [][]int32
		brokers []int32
		want    map[int32][]int32
		err     error
	}{
		// Kafka starts at the broker leading partition 0 (2, index 1) and
		// continues from partition 2: leaders 1 (index (2+1)%3=0), 2.
		{"auto continues pattern", three, 4, nil, []int32{3, 1, 2},
			map[int32][]int32{2: {1, 3, 2}, 3: {2, 3, 1}}, nil},
		{"manual", three, 3, [][]int32{{1, 2, 3}}, []int32{1, 2, 3},
			map[int32][]int32{2: {1, 2, 3}}, nil},
		{"shrink", three, 1, nil, []int32{1, 2, 3}, nil, kerr.InvalidPartitions},
		{"same", three, 2, nil, []int32{1, 2, 3}, nil, kerr.InvalidPartitions},
		{"unknown topic", metadata.Assignment{}, 2, nil, []int32{1}, nil, kerr.UnknownTopicOrPartition},
		{"reassigning", metadata.Assignment{Partitions: three.Partitions, AddingReplicas: map[int32][]int32{0: {4}}},
			3, nil, []int32{1, 2, 3}, nil, kerr.ReassignmentInProgress},
		{"rf above brokers", three, 3, nil, []int32{1, 2}, nil, kerr.InvalidReplicationFactor},
		{"unknown broker", three, 3, [][]int32{{1, 2, 9}}, []int32{1, 2, 3}, nil, kerr.InvalidReplicaAssignment},
		{"assignment count", three, 4, [][]int32{{1, 2, 3}}, []int32{1, 2, 3}, nil, kerr.InvalidReplicaAssignment},
		{"empty replicas", three, 3, [][]int32{{}}, []int32{1, 2, 3}, nil, kerr.InvalidReplicaAssignment},
		{"duplicate broker", three, 3, [][]int32{{1, 1, 2}}, []int32{1, 2, 3}, nil, kerr.InvalidReplicaAssignment},
		{"factor mismatch", three, 3, [][]int32{{1, 2}}, []int32{1, 2, 3}, nil, kerr.InvalidReplicaAssignment},
		{"huge count", three, 1 << 30, [][]int32{{1, 2, 3}}, []int32{1, 2, 3}, nil, kerr.InvalidPartitions},
		{"huge count auto", three, 1<<31 - 1, nil, []int32{1, 2, 3}, nil, kerr.InvalidPartitions},
	}
	for _, c := range cases {
		got, err := planNewPartitions("t", c.cur, c.total, c.manual, c.brokers)
		if !errors.Is(err, c.err) && err != c.err {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
			continue
		}
		if c.want != nil && !maps.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCreatePartitionsNoWait: TimeoutMillis 0 answers once the assignment
// is written (Kafka's behaviour); the partitions then come online anyway.
func TestCreatePartitionsNoWait(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b)
	createTopic(t, cl, "nowait", 1, nil)
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = "nowait", 2
	req.Topics = append(req.Topics, rt)
	resp := rawRequest(t, b.Addr().String(), req).(*kmsg.CreatePartitionsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("response: %+v", resp.Topics)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		td, err := kadm.NewClient(cl).ListTopics(ctx, "nowait")
		if err == nil && len(td["nowait"].Partitions) == 2 && td["nowait"].Partitions[1].Leader >= 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("partition 1 never came online: %v %v", err, td["nowait"].Partitions)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

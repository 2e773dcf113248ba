package broker

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// A LeaderAndIsr that only moves hosted partitions to a new leader epoch and
// ISR, their leader unchanged, applies them in place: well under one
// allocation per partition (a leader's log records the new epoch), where
// rebuilding each partition's state took several.
func TestLeaderAndIsrInPlace(t *testing.T) {
	f := newControlFixture(t)
	ctx := context.Background()
	const n = 300
	req := func(epoch int32, isr []int32) *kmsg.LeaderAndISRRequest {
		r := kmsg.NewPtrLeaderAndISRRequest()
		r.Version, r.ControllerID, r.ControllerEpoch, r.BrokerEpoch = 5, 0, 1, testBrokerEpoch
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic, ts.TopicID = "a", topicA
		for p := range int32(n) {
			ps := kmsg.NewLeaderAndISRRequestTopicPartition()
			ps.Partition, ps.ControllerEpoch, ps.LeaderEpoch, ps.ZKVersion = p, 1, epoch, epoch
			ps.Leader = 2
			if p%3 == 0 {
				ps.Leader = testNode
			}
			ps.Replicas, ps.ISR = []int32{1, 2, 3}, isr
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		r.TopicStates = append(r.TopicStates, ts)
		return r
	}
	if codes := laiCodes(f.LeaderAndIsr(ctx, req(0, []int32{1, 2, 3}))); len(codes) != n+1 {
		t.Fatalf("codes %v", codes)
	}
	isrs := [][]int32{{1, 2}, {1, 2, 3}}
	var reqs []*kmsg.LeaderAndISRRequest
	for e := range int32(6) {
		reqs = append(reqs, req(1+e, isrs[e%2]))
	}
	next := 0
	allocs := testing.AllocsPerRun(len(reqs)-1, func() {
		resp := f.LeaderAndIsr(ctx, reqs[next])
		next++
		for _, c := range laiCodes(resp) {
			if c != 0 {
				t.Fatalf("error code %d", c)
			}
		}
	})
	t.Logf("%.2f allocations per partition", allocs/n)
	if perPartition := allocs / n; perPartition > 0.6 {
		t.Errorf("%.2f allocations per partition", perPartition)
	}
	last := reqs[len(reqs)-1].TopicStates[0].PartitionStates
	for _, p := range []int32{0, 1} {
		st := f.replicas.Get(kafka.TopicPartition{Topic: "a", Partition: p}).State()
		wantRole := replica.Follower
		if p == 0 {
			wantRole = replica.Leader
		}
		if st.Role != wantRole || st.LeaderEpoch != last[p].LeaderEpoch || len(st.ISR) != len(last[p].ISR) {
			t.Errorf("partition %d: %+v", p, st)
		}
	}
}

package broker

import (
	"context"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ElectLeaders through a broker: a broker that stopped and came back gets
// its partitions back, and the answer comes once the answering broker's
// metadata shows the new leaders; another broker answers NOT_CONTROLLER
// (the client then asks the controller).
func TestElectLeadersAfterRestart(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"auto.leader.rebalance.enable": "false"})
	ctl := controllerOf(t, brokers)
	adm := kadm.NewClient(newClient(t, ctl))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "t"); err != nil {
		t.Fatal(err)
	}
	allBrokersSee(t, brokers, time.Now(), "full ISRs", func(l int32, _, isr []int32) bool { return l >= 0 && len(isr) == 3 })
	var victim *Broker
	for _, b := range brokers {
		if b != ctl {
			victim = b
		}
	}
	id, cfg, store := victim.NodeID(), victim.cfg, victim.store
	victim.Close()
	var all []*Broker
	for _, b := range brokers {
		if b != victim {
			all = append(all, b)
		}
	}
	allBrokersSee(t, all, time.Now(), "leadership off the stopped broker", func(l int32, _, _ []int32) bool { return l >= 0 && l != id })
	restarted, err := Start(cfg, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restarted.Close() })
	all = append(all, restarted)
	allBrokersSee(t, all, time.Now(), "the restarted broker in every ISR", func(_ int32, _, isr []int32) bool { return len(isr) == 3 })

	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatal(err)
	}
	elected := 0
	for _, ps := range res {
		for _, r := range ps {
			if r.Err != nil {
				t.Fatalf("%s-%d: %v", r.Topic, r.Partition, r.Err)
			}
			elected++
		}
	}
	if elected != 2 { // broker `id` is the preferred replica of 2 of the 6
		t.Fatalf("elected %d partitions: %v", elected, res)
	}
	for p := range int32(6) {
		if pi, _ := ctl.cache.Partition("t", p); pi.Leader != pi.Replicas[0] {
			t.Errorf("answered before the metadata showed t-%d led by %d: leader %d", p, pi.Replicas[0], pi.Leader)
		}
	}

	// Asked again with a timeout of 0 (segmentio/kafka-go's default): the
	// controller's answers are not bounded by it, so every partition is
	// ELECTION_NOT_NEEDED, as in Kafka, not REQUEST_TIMED_OUT.
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.TimeoutMillis = 1, 0
	rt := kmsg.NewElectLeadersRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{0, 1, 2, 3, 4, 5}
	req.Topics = append(req.Topics, rt)
	again, err := req.RequestWith(ctx, newClient(t, ctl))
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, rt := range again.Topics {
		for _, rp := range rt.Partitions {
			answered++
			if rp.ErrorCode != kerr.ElectionNotNeeded.Code {
				t.Errorf("timeout 0: %s-%d answered %v", rt.Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
		}
	}
	if answered != 6 || again.ErrorCode != 0 {
		t.Errorf("timeout 0: %d of 6 partitions answered, top-level %v", answered, kerr.ErrorForCode(again.ErrorCode))
	}

	// The same election sent to a broker that is not the controller.
	raw := leaderElections{loop: restarted.loop, cache: restarted.cache}
	for _, r := range raw.ElectLeaders(ctx, time.Second, 0, []kafka.TopicPartition{tpOf("t", 0)}) {
		if r.Code != kerr.NotController.Code {
			t.Fatalf("non-controller answered %+v", r)
		}
	}
}

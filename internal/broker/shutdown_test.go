package broker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metadata/metadatatest"
)

// Close on a broker of an RF=3 cluster moves leadership away and takes the
// broker out of every ISR before its registration goes: in the store's
// history every partition it led has another leader, and no ISR holds it,
// when /brokers/ids/<id> is deleted. (Without controlled shutdown the
// controller only reacts to the deletion.)
func TestCloseMovesLeadershipBeforeDeregistering(t *testing.T) {
	brokers := startCluster(t, 3, nil)
	ctrl := controllerOf(t, brokers)
	adm := kadm.NewClient(newClient(t, ctrl))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic = "cs"
	if res, err := adm.CreateTopic(ctx, 6, 3, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var td kadm.TopicDetail
	for {
		tds, err := adm.ListTopics(ctx, topic)
		if err == nil && tds[topic].Err == nil && len(tds[topic].Partitions) == 6 {
			td = tds[topic]
			full := true
			for _, p := range td.Partitions {
				full = full && p.Leader >= 0 && len(p.ISR) == 3
			}
			if full {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("never a full ISR: %v %+v", err, tds)
		}
		time.Sleep(50 * time.Millisecond)
	}
	victimID := td.Partitions[0].Leader
	var victim *Broker
	for _, b := range brokers {
		if b.NodeID() == victimID {
			victim = b
		}
	}
	var led []int32
	for _, p := range td.Partitions {
		if p.Leader == victimID {
			led = append(led, p.Partition)
		}
	}
	_, rev, err := ctrl.store.List(ctx, metadata.BrokerIDsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	history := ctrl.store.WatchPrefix(ctx, "/", rev+1)
	if err := victim.Close(); err != nil {
		t.Fatal(err)
	}
	leaders, inISR := metadatatest.StatesAtDeregistration(t, history, victimID, topic)
	for _, p := range led {
		if l, ok := leaders[p]; !ok || l == victimID || l < 0 {
			t.Errorf("partition %d: leader %d when broker %d deregistered (written: %v)", p, l, victimID, ok)
		}
	}
	for p := range int32(6) {
		if in, ok := inISR[p]; !ok || in {
			t.Errorf("partition %d: broker %d still in the ISR when it deregistered (written: %v)", p, victimID, ok)
		}
	}
}

// syncBuffer is a log destination read while brokers write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A single broker leading RF=1 partitions asks once: the controller (itself)
// answers them as remaining, and with no other live replica there is no
// retry. controlled.shutdown.enable=false asks nothing.
func TestCloseSingleBrokerDoesNotRetry(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		var logs syncBuffer
		cfg, _, err := config.Load(map[string]string{
			"broker.id": "0", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(),
			"controlled.shutdown.enable": map[bool]string{true: "true", false: "false"}[enabled],
		})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		cl := newClient(t, b)
		createTopic(t, cl, "single", 3, nil)
		cl.Close()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		asked := strings.Count(out, "controlled shutdown:") + strings.Count(out, "controlled shutdown attempt") +
			strings.Count(out, "controlled shutdown succeeded")
		switch {
		case !enabled && asked != 0:
			t.Errorf("disabled, yet:\n%s", out)
		case enabled && (asked != 1 || !strings.Contains(out, "no partition left has a replica on another live broker; not retrying") ||
			!strings.Contains(out, "remaining=3")):
			t.Errorf("want one attempt answering the 3 partitions as remaining, then no retry:\n%s", out)
		}
	}
}

// cacheBroker is a Broker with just a metadata cache and a configuration.
func cacheBroker(t *testing.T, id int32, props map[string]string) *Broker {
	base := map[string]string{"broker.id": "0", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir()}
	for k, v := range props {
		base[k] = v
	}
	cfg, _, err := config.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	return &Broker{cfg: cfg, nodeID: id, cache: metacache.New(id), log: slog.New(slog.DiscardHandler)}
}

// updateMetadata tells the cache controller ctrl, the live brokers, and
// partition topic-p's replicas.
func updateMetadata(c *metacache.Cache, ctrl int32, live []int32, topic string, replicas map[int32][]int32) {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 8, ctrl, 1, -1
	for _, id := range live {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID, lb.Host, lb.Port = id, "127.0.0.1", 9000+id
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic = topic
	for p, rs := range replicas {
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Partition, ps.Leader, ps.Replicas, ps.ISR = p, rs[0], rs, rs[:1]
		ts.PartitionStates = append(ts.PartitionStates, ps)
	}
	req.TopicStates = append(req.TopicStates, ts)
	c.ApplyUpdateMetadata(req)
}

// Remaining partitions are worth a retry only when one of them has a
// replica on another live broker.
func TestMovable(t *testing.T) {
	b := cacheBroker(t, 1, nil)
	updateMetadata(b.cache, 1, []int32{1, 2}, "t", map[int32][]int32{0: {1}, 1: {1, 3}, 2: {1, 2}})
	for _, tt := range []struct {
		parts []int32
		want  bool
	}{
		{[]int32{0}, false},    // RF 1
		{[]int32{1}, false},    // the other replica's broker is not live
		{[]int32{0, 1}, false}, // neither
		{[]int32{0, 2}, true},  // 2 is live and hosts t-2
	} {
		var tps []kafka.TopicPartition
		for _, p := range tt.parts {
			tps = append(tps, kafka.TopicPartition{Topic: "t", Partition: p})
		}
		if got := b.movable(tps); got != tt.want {
			t.Errorf("movable(%v) = %v, want %v", tt.parts, got, tt.want)
		}
	}
}

// After failing to reach the controller, the wait between attempts ends
// when the metadata cache names another controller, not after the backoff
// (ten minutes here: only the early end lets the test finish).
func TestWaitRetryEndsOnNewController(t *testing.T) {
	b := cacheBroker(t, 1, map[string]string{"controlled.shutdown.retry.backoff.ms": "600000"})
	updateMetadata(b.cache, 2, []int32{1, 2, 3}, "t", nil)
	done := make(chan struct{})
	go func() { b.waitRetry(context.Background(), 2, true); close(done) }()
	updateMetadata(b.cache, 2, []int32{1, 2, 3}, "t", nil) // the same controller: still waiting
	select {
	case <-done:
		t.Fatal("returned before the controller changed")
	case <-time.After(50 * time.Millisecond):
	}
	updateMetadata(b.cache, 3, []int32{1, 3}, "t", nil)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting after the controller changed")
	}
}

package metacache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/kafka"
)

// part is one partition state of a test request: leader, epoch, replicas.
type part struct {
	topic    string
	id       byte // topic id {id}
	p        int32
	leader   int32
	epoch    int32
	replicas []int32
}

func updateMetadata(ctrlEpoch int32, brokerEpoch int64, brokers []int32, parts ...part) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 8, 1, ctrlEpoch, brokerEpoch
	for _, id := range brokers {
		b := kmsg.NewUpdateMetadataRequestLiveBroker()
		b.ID = id
		e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		e.Host, e.Port, e.ListenerName = "h", 9090+id, "PLAINTEXT"
		b.Endpoints = append(b.Endpoints, e)
		req.LiveBrokers = append(req.LiveBrokers, b)
	}
	for _, p := range parts {
		i := slices.IndexFunc(req.TopicStates, func(t kmsg.UpdateMetadataRequestTopicState) bool { return t.Topic == p.topic })
		if i < 0 {
			ts := kmsg.NewUpdateMetadataRequestTopicState()
			ts.Topic, ts.TopicID = p.topic, [16]byte{p.id}
			req.TopicStates = append(req.TopicStates, ts)
			i = len(req.TopicStates) - 1
		}
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Partition, ps.Leader, ps.LeaderEpoch, ps.ControllerEpoch = p.p, p.leader, p.epoch, ctrlEpoch
		ps.Replicas, ps.ISR = p.replicas, p.replicas
		req.TopicStates[i].PartitionStates = append(req.TopicStates[i].PartitionStates, ps)
	}
	return req
}

// summary renders the cache's topics as "name:p=leader@epoch,..." for comparison.
func summary(c *Cache) string {
	s := ""
	for _, t := range c.Topics() {
		s += fmt.Sprintf("%s/%d:", t.Name, t.ID[0])
		for _, p := range t.Partitions {
			s += fmt.Sprintf("%d=%d@%d,", p.ID, p.Leader, p.LeaderEpoch)
		}
		s += " "
	}
	return s
}

func brokerIDs(c *Cache) []int32 {
	var ids []int32
	for _, b := range c.Brokers() {
		ids = append(ids, b.ID)
	}
	return ids
}

func TestApplyUpdateMetadata(t *testing.T) {
	r := []int32{0, 1}
	steps := []struct {
		name        string
		req         *kmsg.UpdateMetadataRequest
		wantCode    int16
		wantTopics  string
		wantBrokers []int32
	}{
		{"first update", updateMetadata(1, 10, []int32{2, 0, 1},
			part{"b", 2, 0, 1, 0, r}, part{"a", 1, 1, 0, 0, r}, part{"a", 1, 0, 1, 0, r}),
			0, "a/1:0=1@0,1=0@0, b/2:0=1@0, ", []int32{0, 1, 2}},
		{"partial update keeps other partitions, replaces brokers", updateMetadata(1, 10, []int32{0, 1},
			part{"a", 1, 0, 0, 1, r}),
			0, "a/1:0=0@1,1=0@0, b/2:0=1@0, ", []int32{0, 1}},
		{"stale controller epoch is refused and not applied", updateMetadata(0, 10, []int32{0},
			part{"a", 1, 0, 1, 9, r}),
			kerr.StaleControllerEpoch.Code, "a/1:0=0@1,1=0@0, b/2:0=1@0, ", []int32{0, 1}},
		{"stale broker epoch is refused and not applied", updateMetadata(2, 9, []int32{0},
			part{"a", 1, 0, 1, 9, r}),
			kerr.StaleBrokerEpoch.Code, "a/1:0=0@1,1=0@0, b/2:0=1@0, ", []int32{0, 1}},
		{"newer controller, unknown broker epoch", updateMetadata(2, -1, []int32{0, 1},
			part{"b", 2, 0, 0, 1, r}),
			0, "a/1:0=0@1,1=0@0, b/2:0=0@1, ", []int32{0, 1}},
		{"leader -2 deletes a partition", updateMetadata(2, 10, []int32{0, 1},
			part{"a", 1, 1, kafka.LeaderDuringDelete, 1, r}),
			0, "a/1:0=0@1, b/2:0=0@1, ", []int32{0, 1}},
		{"last partition deleted removes the topic", updateMetadata(2, 10, []int32{0, 1},
			part{"a", 1, 0, kafka.LeaderDuringDelete, 1, r}),
			0, "b/2:0=0@1, ", []int32{0, 1}},
		{"re-created topic drops old partitions", updateMetadata(3, 10, []int32{0},
			part{"b", 3, 1, 1, 0, r}),
			0, "b/3:1=1@0, ", []int32{0}},
	}
	c := New(0)
	c.SetBrokerEpoch(10)
	for _, s := range steps {
		if code := c.ApplyUpdateMetadata(s.req); code != s.wantCode {
			t.Fatalf("%s: code %d, want %d", s.name, code, s.wantCode)
		}
		if got := summary(c); got != s.wantTopics {
			t.Fatalf("%s: topics %q, want %q", s.name, got, s.wantTopics)
		}
		if got := brokerIDs(c); !slices.Equal(got, s.wantBrokers) {
			t.Fatalf("%s: brokers %v, want %v", s.name, got, s.wantBrokers)
		}
	}
	if _, ok := c.TopicByID([16]byte{2}); ok {
		t.Fatal("old id of a re-created topic still resolves")
	}
	if ti, ok := c.TopicByID([16]byte{3}); !ok || ti.Name != "b" {
		t.Fatalf("TopicByID(3) = %+v, %v", ti, ok)
	}
	if _, ok := c.Topic("a"); ok {
		t.Fatal("deleted topic a still present")
	}
	if p, ok := c.Partition("b", 1); !ok || p.Leader != 1 || !slices.Equal(p.ISR, r) {
		t.Fatalf("Partition(b,1) = %+v, %v", p, ok)
	}
	if c.ControllerID() != 1 || c.ControllerEpoch() != 3 {
		t.Fatalf("controller %d epoch %d", c.ControllerID(), c.ControllerEpoch())
	}
}

// A topic deleted while the broker was not registered (its session ended)
// is gone from the cache once the controller's full image for its new
// registration arrives: the first UpdateMetadata with partitions for the
// newer broker epoch. An update with the live brokers only (a failover
// sends one first) and later updates for the same registration drop
// nothing.
// A full snapshot (KIP-866's Type) drops the topics it does not list, even
// when it lists none; other requests drop nothing, whatever their broker
// epoch.
func TestFullSnapshotDropsUnlistedTopics(t *testing.T) {
	r := []int32{0, 1}
	full := func(req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataRequest {
		kafka.MarkFullUpdateMetadata(req)
		return req
	}
	c := New(0)
	c.SetBrokerEpoch(10)
	steps := []struct {
		name string
		req  *kmsg.UpdateMetadataRequest
		want string
	}{
		{"first registration's image", full(updateMetadata(1, 10, []int32{0, 1},
			part{"a", 1, 0, 1, 0, r}, part{"b", 2, 0, 1, 0, r})), "a/1:0=1@0, b/2:0=1@0, "},
		{"an update adds", updateMetadata(1, 10, []int32{0, 1},
			part{"c", 3, 0, 0, 0, r}), "a/1:0=1@0, b/2:0=1@0, c/3:0=0@0, "},
		{"the live brokers only, for a new registration", updateMetadata(2, 12, []int32{0, 1}),
			"a/1:0=1@0, b/2:0=1@0, c/3:0=0@0, "},
		{"an update for the new registration drops nothing", updateMetadata(2, 12, []int32{0, 1},
			part{"b", 2, 0, 0, 1, r}), "a/1:0=1@0, b/2:0=0@1, c/3:0=0@0, "},
		{"the new registration's image: a was deleted meanwhile", full(updateMetadata(2, 12, []int32{0, 1},
			part{"b", 2, 0, 0, 1, r}, part{"c", 3, 0, 0, 0, r})), "b/2:0=0@1, c/3:0=0@0, "},
		{"later updates drop nothing", updateMetadata(2, 12, []int32{0, 1},
			part{"d", 4, 0, 1, 0, r}), "b/2:0=0@1, c/3:0=0@0, d/4:0=1@0, "},
		{"an empty image: every topic was deleted meanwhile", full(updateMetadata(3, 14, []int32{0, 1})), ""},
	}
	for _, s := range steps {
		if code := c.ApplyUpdateMetadata(s.req); code != 0 {
			t.Fatalf("%s: code %d", s.name, code)
		}
		if got := summary(c); got != s.want {
			t.Fatalf("%s: topics %q, want %q", s.name, got, s.want)
		}
		switch s.name {
		case "the live brokers only, for a new registration":
			c.Unready()
			c.SetBrokerEpoch(12)
		case "later updates drop nothing":
			c.Unready()
			c.SetBrokerEpoch(14)
		}
	}
	if _, ok := c.TopicByID([16]byte{1}); ok {
		t.Fatal("the deleted topic's id still resolves")
	}
}

func TestCheckEpochs(t *testing.T) {
	tests := []struct {
		name       string
		ctrlEpoch  int32
		brokerEp   int64
		want       int16
		wantCtrlEp int32
	}{
		{"equal controller epoch", 5, 100, 0, 5},
		{"older controller epoch", 4, 100, kerr.StaleControllerEpoch.Code, 5},
		{"older broker epoch", 6, 99, kerr.StaleBrokerEpoch.Code, 5},
		{"newer broker epoch (controller learnt it first)", 6, 101, 0, 6},
		{"unknown broker epoch", 7, -1, 0, 7},
	}
	c := New(0)
	c.SetBrokerEpoch(100)
	if code := c.CheckEpochs(1, 5, 100); code != 0 {
		t.Fatal(code)
	}
	for _, tt := range tests {
		if got := c.CheckEpochs(1, tt.ctrlEpoch, tt.brokerEp); got != tt.want {
			t.Errorf("%s: code %d, want %d", tt.name, got, tt.want)
		}
		if got := c.ControllerEpoch(); got != tt.wantCtrlEp {
			t.Errorf("%s: controller epoch %d, want %d", tt.name, got, tt.wantCtrlEp)
		}
	}
}

func TestChangedAndConfigs(t *testing.T) {
	c := New(0)
	ch := c.Changed()
	select {
	case <-ch:
		t.Fatal("closed before any change")
	default:
	}
	c.ApplyUpdateMetadata(updateMetadata(1, -1, []int32{0}, part{"t", 1, 0, 0, 0, []int32{0}}))
	select {
	case <-ch:
	default:
		t.Fatal("not closed after an update")
	}
	before := c.Topics()
	ch = c.Changed()
	c.SetTopicConfig("t", map[string]string{"retention.ms": "1"})
	<-ch // closed, or the test hangs
	if ti, _ := c.Topic("t"); ti.Configs["retention.ms"] != "1" {
		t.Fatalf("configs %v", ti.Configs)
	}
	if c.Topics()[0].Configs["retention.ms"] != "1" || before[0].Configs != nil {
		t.Fatal("Topics() not rebuilt after config change, or old snapshot mutated")
	}
	c.SetTopicConfig("t", nil)
	if ti, _ := c.Topic("t"); ti.Configs != nil {
		t.Fatalf("configs %v after delete", ti.Configs)
	}
}

func TestListenerSelection(t *testing.T) {
	req := updateMetadata(1, -1, nil)
	b := kmsg.NewUpdateMetadataRequestLiveBroker()
	b.ID = 3
	for _, l := range []string{"INTERNAL", "EXTERNAL"} {
		e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		e.Host, e.Port, e.ListenerName = l, 1, l
		b.Endpoints = append(b.Endpoints, e)
	}
	req.LiveBrokers = []kmsg.UpdateMetadataRequestLiveBroker{b}
	for _, tt := range []struct{ listener, wantHost string }{{"", "INTERNAL"}, {"EXTERNAL", "EXTERNAL"}, {"OTHER", ""}} {
		c := New(0)
		c.SetListenerName(tt.listener)
		c.ApplyUpdateMetadata(req)
		got := ""
		if bs := c.Brokers(); len(bs) == 1 {
			got = bs[0].Host
		}
		if got != tt.wantHost {
			t.Errorf("listener %q: host %q, want %q", tt.listener, got, tt.wantHost)
		}
		if bs := c.Brokers(); len(bs) != 1 {
			t.Errorf("listener %q: %d live brokers, want 1 whatever its listeners", tt.listener, len(bs))
		}
	}
	// BrokersOn: the brokers with that listener, at its address.
	c := New(0)
	c.ApplyUpdateMetadata(req)
	if bs := c.BrokersOn("EXTERNAL"); len(bs) != 1 || bs[0].Host != "EXTERNAL" {
		t.Errorf("on EXTERNAL: %+v", bs)
	}
	if bs := c.BrokersOn("OTHER"); len(bs) != 0 {
		t.Errorf("on OTHER: %+v", bs)
	}
}

var _ api.Metadata = (*Cache)(nil)

// BenchmarkTopics measures Topics() on a cache of 1,000 topics × 100
// partitions after a one-partition update (rebuild) and without (cached).
func BenchmarkTopics(b *testing.B) {
	c := New(0)
	var parts []part
	for tn := range 1000 {
		for p := range int32(100) {
			parts = append(parts, part{fmt.Sprintf("t%04d", tn), byte(tn), p, 0, 0, []int32{0, 1, 2}})
		}
	}
	c.ApplyUpdateMetadata(updateMetadata(1, -1, []int32{0, 1, 2}, parts...))
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			_ = c.Topics()
		}
	})
	one := updateMetadata(1, -1, []int32{0, 1, 2}, part{"t0001", 1, 0, 1, 1, []int32{0, 1, 2}})
	b.Run("after-update", func(b *testing.B) {
		for b.Loop() {
			c.ApplyUpdateMetadata(one)
			_ = c.Topics()
		}
	})
}

// Readers and a writer at once, for the race detector.
func TestConcurrentUse(t *testing.T) {
	c := New(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range int32(200) {
			c.ApplyUpdateMetadata(updateMetadata(1, -1, []int32{0}, part{"t", 1, i % 4, 0, i, []int32{0}}))
			c.SetTopicConfig("t", map[string]string{"k": "v"})
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		for _, ti := range c.Topics() {
			_, _ = c.Topic(ti.Name)
			_, _ = c.TopicByID(ti.ID)
		}
		_ = c.Brokers()
		_, _ = c.Partition("t", 0)
	}
}

// A restarted broker, not registered yet while its previous life's
// registration runs out its session, refuses the controller's requests
// addressed to that previous life (found by the fault campaign: the new
// process applied LeaderAndIsr for its old epoch and kept a leadership the
// controller later moved away), and accepts those for its coming
// registration.
func TestCheckEpochsBeforeRegistering(t *testing.T) {
	c := New(0)
	c.SetStaleUpTo(500) // the store's revision when the process started
	if got := c.CheckEpochs(1, 5, 480); got != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("previous life's epoch: code %d, want STALE_BROKER_EPOCH", got)
	}
	if got := c.CheckEpochs(1, 5, 500); got != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("epoch at the start revision: code %d, want STALE_BROKER_EPOCH", got)
	}
	if got := c.CheckEpochs(1, 5, 501); got != 0 {
		t.Fatalf("this life's epoch before SetBrokerEpoch: code %d", got)
	}
	c.SetBrokerEpoch(501)
	if got := c.CheckEpochs(1, 5, 480); got != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("previous life's epoch after registering: code %d", got)
	}
	if got := c.CheckEpochs(1, 5, -1); got != 0 {
		t.Fatalf("unknown epoch: code %d", got)
	}
}

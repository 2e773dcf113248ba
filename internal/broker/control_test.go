package broker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

const (
	testNode        = 1
	testBrokerEpoch = 100
)

var topicA = [16]byte{0xa}

// controlFixture is a controlPlane over real storage in a temp dir.
type controlFixture struct {
	*controlPlane
	dir        string
	cfgLookups []string
}

func newControlFixture(t *testing.T) *controlFixture {
	t.Helper()
	dir := t.TempDir()
	logs, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	cfg, _, err := config.Load(map[string]string{"broker.id": "1", "log.dirs": dir})
	if err != nil {
		t.Fatal(err)
	}
	cache := metacache.New(testNode)
	cache.SetBrokerEpoch(testBrokerEpoch)
	f := &controlFixture{dir: dir}
	f.controlPlane = &controlPlane{
		cache: cache, replicas: replica.NewManager(logs), logs: logs, nodeID: testNode,
		topicConfig: func(_ context.Context, topic string) (map[string]string, error) {
			f.cfgLookups = append(f.cfgLookups, topic)
			return map[string]string{"max.message.bytes": "5000"}, nil
		},
		partitionConfig: (&Broker{cfg: cfg}).partitionConfig,
		log:             slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	return f
}

// lai is one partition state of a LeaderAndIsr v5 request.
type lai struct {
	topic       string
	id          [16]byte
	p           int32
	leader      int32
	leaderEpoch int32
	replicas    []int32
}

func leaderAndIsr(ctrlEpoch int32, brokerEpoch int64, parts ...lai) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 5, 0, ctrlEpoch, brokerEpoch
	for _, p := range parts {
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic, ts.TopicID = p.topic, p.id
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition, ps.Leader, ps.LeaderEpoch, ps.ControllerEpoch = p.p, p.leader, p.leaderEpoch, ctrlEpoch
		ps.Replicas, ps.ISR, ps.ZKVersion = p.replicas, p.replicas, p.leaderEpoch
		ts.PartitionStates = append(ts.PartitionStates, ps)
		req.TopicStates = append(req.TopicStates, ts)
	}
	return req
}

func stopReplica(ctrlEpoch int32, brokerEpoch int64, topic string, p, leaderEpoch int32, del bool) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 3, 0, ctrlEpoch, brokerEpoch
	t := kmsg.NewStopReplicaRequestTopic()
	t.Topic = topic
	ps := kmsg.NewStopReplicaRequestTopicPartitionState()
	ps.Partition, ps.LeaderEpoch, ps.Delete = p, leaderEpoch, del
	t.PartitionStates = append(t.PartitionStates, ps)
	req.Topics = append(req.Topics, t)
	return req
}

// laiCodes flattens a LeaderAndIsr v5 response: top-level code, then each
// partition's.
func laiCodes(resp *kmsg.LeaderAndISRResponse) []int16 {
	codes := []int16{resp.ErrorCode}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes = append(codes, p.ErrorCode)
		}
	}
	return codes
}

func produceTo(p *replica.Partition) error {
	b := recordtest.Values(1000, "v")
	hdrs, err := record.Validate(b, 1<<20)
	if err != nil {
		return err
	}
	_, err = p.AppendAsLeader(b, hdrs, time.Unix(1, 0), 1)
	return err
}

func TestControlLeaderThenFollower(t *testing.T) {
	f := newControlFixture(t)
	ctx := context.Background()
	tp := kafka.TopicPartition{Topic: "a", Partition: 0}
	steps := []struct {
		name      string
		req       *kmsg.LeaderAndISRRequest
		wantCodes []int16
		wantRole  replica.Role
		wantEpoch int32
	}{
		{"leader at epoch 0", leaderAndIsr(1, testBrokerEpoch, lai{"a", topicA, 0, testNode, 0, []int32{1, 2}}),
			[]int16{0, 0}, replica.Leader, 0},
		{"same leader epoch is stale", leaderAndIsr(1, testBrokerEpoch, lai{"a", topicA, 0, 2, 0, []int32{1, 2}}),
			[]int16{0, kerr.StaleControllerEpoch.Code}, replica.Leader, 0},
		{"follower at epoch 1", leaderAndIsr(1, testBrokerEpoch, lai{"a", topicA, 0, 2, 1, []int32{1, 2}}),
			[]int16{0, 0}, replica.Follower, 1},
		{"other topic id", leaderAndIsr(1, testBrokerEpoch, lai{"a", [16]byte{0xb}, 0, testNode, 2, []int32{1, 2}}),
			[]int16{0, kerr.InconsistentTopicID.Code}, replica.Follower, 1},
		{"stale controller epoch: nothing applied", leaderAndIsr(0, testBrokerEpoch, lai{"a", topicA, 0, testNode, 5, []int32{1, 2}}),
			[]int16{kerr.StaleControllerEpoch.Code, kerr.StaleControllerEpoch.Code}, replica.Follower, 1},
		{"stale broker epoch: nothing applied", leaderAndIsr(2, testBrokerEpoch-1, lai{"a", topicA, 0, testNode, 5, []int32{1, 2}}),
			[]int16{kerr.StaleBrokerEpoch.Code, kerr.StaleBrokerEpoch.Code}, replica.Follower, 1},
	}
	for _, s := range steps {
		resp := f.LeaderAndIsr(ctx, s.req)
		if got := laiCodes(resp); !slices.Equal(got, s.wantCodes) {
			t.Fatalf("%s: codes %v, want %v", s.name, got, s.wantCodes)
		}
		if resp.Topics[0].TopicID != s.req.TopicStates[0].TopicID || resp.Topics[0].Partitions[0].Partition != 0 {
			t.Fatalf("%s: response topic %+v", s.name, resp.Topics[0])
		}
		p := f.replicas.Get(tp)
		if p == nil {
			t.Fatalf("%s: partition not hosted", s.name)
		}
		if st := p.State(); st.Role != s.wantRole || st.LeaderEpoch != s.wantEpoch {
			t.Fatalf("%s: state %+v, want %v at epoch %d", s.name, st, s.wantRole, s.wantEpoch)
		}
		err := produceTo(p)
		if s.wantRole == replica.Leader && err != nil {
			t.Fatalf("%s: produce to leader: %v", s.name, err)
		}
		if s.wantRole == replica.Follower && !errors.Is(err, replica.ErrNotLeader) {
			t.Fatalf("%s: produce to follower: %v, want ErrNotLeader", s.name, err)
		}
	}
	if p := f.replicas.Get(tp); p.Config().MaxMessageBytes != 5000 {
		t.Fatalf("topic config not applied: max.message.bytes %d", p.Config().MaxMessageBytes)
	}
	if !slices.Equal(f.cfgLookups, []string{"a"}) {
		t.Fatalf("topic config looked up for %v, want once for a", f.cfgLookups)
	}
}

// A new controller sends every partition again: those whose leader epoch
// is not newer are counted in the request's one Info line, not logged one
// by one (100k lines a broker on each failover at 100k partitions).
func TestControlStaleEpochsCountedNotLogged(t *testing.T) {
	f := newControlFixture(t)
	var log strings.Builder
	f.log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var parts []lai
	for p := range int32(20) {
		parts = append(parts, lai{"a", topicA, p, testNode, 0, []int32{testNode, 2}})
	}
	ctx := context.Background()
	f.LeaderAndIsr(ctx, leaderAndIsr(1, testBrokerEpoch, parts...))
	log.Reset()
	resp := f.LeaderAndIsr(ctx, leaderAndIsr(2, testBrokerEpoch, parts...))
	for i, code := range laiCodes(resp)[1:] {
		if code != kerr.StaleControllerEpoch.Code {
			t.Fatalf("partition %d: code %d, want STALE_CONTROLLER_EPOCH", i, code)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `msg="applied LeaderAndIsr"`) || !strings.Contains(lines[0], "ignored_stale_epoch=20") {
		t.Fatalf("log of a replayed LeaderAndIsr of 20 partitions:\n%s\nwant one applied line with ignored_stale_epoch=20", log.String())
	}
}

func TestControlLeaderAndIsrNotAReplica(t *testing.T) {
	f := newControlFixture(t)
	resp := f.LeaderAndIsr(context.Background(), leaderAndIsr(1, -1,
		lai{"a", topicA, 0, 2, 0, []int32{2, 3}}, lai{"a", topicA, 1, 2, 0, []int32{2, testNode}}))
	if got, want := laiCodes(resp), []int16{0, kerr.UnknownTopicOrPartition.Code, 0}; !slices.Equal(got, want) {
		t.Fatalf("codes %v, want %v", got, want)
	}
	if f.replicas.Get(kafka.TopicPartition{Topic: "a", Partition: 0}) != nil {
		t.Fatal("partition hosted although this broker is not a replica")
	}
	if _, err := os.Stat(filepath.Join(f.dir, "a-0")); !os.IsNotExist(err) {
		t.Fatalf("log created for a partition this broker does not replicate: %v", err)
	}
}

// partitionDirs lists the directories of topic a's partition 0.
func partitionDirs(t *testing.T, dir string) (live bool, deleted int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch n := e.Name(); {
		case n == "a-0":
			live = true
		case strings.HasPrefix(n, "a-0.") && strings.HasSuffix(n, "-delete"):
			deleted++
		}
	}
	return live, deleted
}

func TestControlStopReplica(t *testing.T) {
	tp := kafka.TopicPartition{Topic: "a", Partition: 0}
	tests := []struct {
		name        string
		req         *kmsg.StopReplicaRequest
		wantTop     int16
		wantCode    int16
		wantHosted  bool
		wantLive    bool
		wantDeleted int
	}{
		{"delete renames the directory", stopReplica(1, testBrokerEpoch, "a", 0, 3, true), 0, 0, false, false, 1},
		{"deletion sentinel ignores the epoch", stopReplica(1, testBrokerEpoch, "a", 0, kafka.EpochDuringDelete, true), 0, 0, false, false, 1},
		{"newer epoch, no delete keeps the log", stopReplica(1, testBrokerEpoch, "a", 0, 4, false), 0, 0, false, true, 0},
		{"older leader epoch is fenced", stopReplica(1, testBrokerEpoch, "a", 0, 2, true), 0, kerr.FencedLeaderEpoch.Code, true, true, 0},
		{"stale controller epoch: nothing applied", stopReplica(0, testBrokerEpoch, "a", 0, 3, true),
			kerr.StaleControllerEpoch.Code, kerr.StaleControllerEpoch.Code, true, true, 0},
		{"stale broker epoch: nothing applied", stopReplica(1, 1, "a", 0, 3, true),
			kerr.StaleBrokerEpoch.Code, kerr.StaleBrokerEpoch.Code, true, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newControlFixture(t)
			ctx := context.Background()
			if got := laiCodes(f.LeaderAndIsr(ctx, leaderAndIsr(1, testBrokerEpoch, lai{"a", topicA, 0, testNode, 3, []int32{1}}))); !slices.Equal(got, []int16{0, 0}) {
				t.Fatalf("LeaderAndIsr: %v", got)
			}
			writeOne(t, f, tp) // a partition's directory exists once it holds data
			resp := f.StopReplica(ctx, tt.req)
			if resp.ErrorCode != tt.wantTop || len(resp.Partitions) != 1 || resp.Partitions[0].ErrorCode != tt.wantCode ||
				resp.Partitions[0].Topic != "a" {
				t.Fatalf("response %+v, want top %d partition %d", resp, tt.wantTop, tt.wantCode)
			}
			if hosted := f.replicas.Get(tp) != nil; hosted != tt.wantHosted {
				t.Fatalf("hosted %v, want %v", hosted, tt.wantHosted)
			}
			if live, deleted := partitionDirs(t, f.dir); live != tt.wantLive || deleted != tt.wantDeleted {
				t.Fatalf("dirs: live %v deleted %d, want %v %d", live, deleted, tt.wantLive, tt.wantDeleted)
			}
		})
	}
}

// A partition no longer hosted (stopped earlier, or found on disk after a
// restart) is still deleted: the topic was deleted while this broker was away.
func TestControlStopReplicaDeletesUnhostedLog(t *testing.T) {
	f := newControlFixture(t)
	ctx := context.Background()
	f.LeaderAndIsr(ctx, leaderAndIsr(1, testBrokerEpoch, lai{"a", topicA, 0, testNode, 0, []int32{1}}))
	writeOne(t, f, kafka.TopicPartition{Topic: "a", Partition: 0})
	f.StopReplica(ctx, stopReplica(1, testBrokerEpoch, "a", 0, 0, false))
	if live, _ := partitionDirs(t, f.dir); !live {
		t.Fatal("log gone after StopReplica without delete")
	}
	resp := f.StopReplica(ctx, stopReplica(1, testBrokerEpoch, "a", 0, kafka.EpochDuringDelete, true))
	if resp.Partitions[0].ErrorCode != 0 {
		t.Fatalf("code %d", resp.Partitions[0].ErrorCode)
	}
	if live, deleted := partitionDirs(t, f.dir); live || deleted != 1 {
		t.Fatalf("dirs: live %v deleted %d, want renamed", live, deleted)
	}
}

func TestControlUpdateMetadata(t *testing.T) {
	f := newControlFixture(t)
	ctx := context.Background()
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 8, 0, 2, testBrokerEpoch
	for _, id := range []int32{0, 1} {
		b := kmsg.NewUpdateMetadataRequestLiveBroker()
		e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		b.ID, e.Host, e.Port = id, "localhost", 9092+id
		b.Endpoints = append(b.Endpoints, e)
		req.LiveBrokers = append(req.LiveBrokers, b)
	}
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID = "a", topicA
	ps := kmsg.NewUpdateMetadataRequestTopicPartition()
	ps.Leader, ps.LeaderEpoch, ps.Replicas, ps.ISR = 1, 4, []int32{1, 0}, []int32{1}
	ts.PartitionStates = append(ts.PartitionStates, ps)
	req.TopicStates = append(req.TopicStates, ts)

	if resp := f.UpdateMetadata(ctx, req); resp.ErrorCode != 0 {
		t.Fatalf("code %d", resp.ErrorCode)
	}
	topics := f.cache.Topics()
	if len(topics) != 1 || topics[0].Name != "a" || topics[0].ID != topicA || len(topics[0].Partitions) != 1 {
		t.Fatalf("topics %+v", topics)
	}
	if p := topics[0].Partitions[0]; p.Leader != 1 || p.LeaderEpoch != 4 || !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("partition %+v", p)
	}
	if len(f.cache.Brokers()) != 2 || f.cache.ControllerID() != 0 {
		t.Fatalf("brokers %+v controller %d", f.cache.Brokers(), f.cache.ControllerID())
	}

	stale := *req
	stale.ControllerEpoch = 1
	stale.TopicStates = nil
	if resp := f.UpdateMetadata(ctx, &stale); resp.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("stale: code %d", resp.ErrorCode)
	}
	if len(f.cache.Brokers()) != 2 || len(f.cache.Topics()) != 1 {
		t.Fatal("stale UpdateMetadata was applied")
	}
}

// Malformed partition states answer errors, never panic.
func TestControlBadInput(t *testing.T) {
	f := newControlFixture(t)
	ctx := context.Background()
	resp := f.LeaderAndIsr(ctx, leaderAndIsr(1, testBrokerEpoch,
		lai{"../x", topicA, 0, testNode, 0, []int32{1}}, lai{"a", topicA, -1, testNode, 0, []int32{1}}))
	for _, c := range laiCodes(resp)[1:] {
		if c != kerr.KafkaStorageError.Code {
			t.Fatalf("codes %v, want KAFKA_STORAGE_ERROR for bad partitions", laiCodes(resp))
		}
	}
	f.StopReplica(ctx, stopReplica(1, testBrokerEpoch, "", -5, 0, true))
	f.UpdateMetadata(ctx, kmsg.NewPtrUpdateMetadataRequest())
}

// writeOne appends one record to a hosted leader partition, so that its log
// exists on disk (an empty partition has no directory until its first
// write).
func writeOne(t *testing.T, f *controlFixture, tp kafka.TopicPartition) {
	t.Helper()
	p := f.replicas.Get(tp)
	if p == nil {
		t.Fatalf("%s not hosted", tp)
	}
	batch := recordBatch("x")
	hdrs, err := record.Validate(batch, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader(batch, hdrs, time.Now(), 1); err != nil {
		t.Fatal(err)
	}
}

// A deleted topic's per-topic counters go when the broker deletes its last
// partition of it, not before, and not when a partition only stops.
func TestControlStopReplicaForgetsTopicStats(t *testing.T) {
	f := newControlFixture(t)
	f.stats = &kafka.BrokerTopicStats{}
	ctx := context.Background()
	f.LeaderAndIsr(ctx, leaderAndIsr(1, testBrokerEpoch,
		lai{"a", topicA, 0, testNode, 0, []int32{1}}, lai{"a", topicA, 1, testNode, 0, []int32{1}}))
	f.stats.CountIn(f.stats.Topic("a"), 100, 1)
	counted := func() bool {
		found := false
		f.stats.EachTopic(func(topic string, _ *kafka.TopicStats) { found = found || topic == "a" })
		return found
	}
	for _, step := range []struct {
		p       int32
		delete  bool
		counted bool
	}{{0, false, true}, {0, true, true}, {1, true, false}} {
		resp := f.StopReplica(ctx, stopReplica(1, testBrokerEpoch, "a", step.p, kafka.EpochDuringDelete, step.delete))
		if resp.Partitions[0].ErrorCode != 0 {
			t.Fatalf("StopReplica a-%d: code %d", step.p, resp.Partitions[0].ErrorCode)
		}
		if got := counted(); got != step.counted {
			t.Fatalf("after StopReplica a-%d delete=%v: topic a counted %v, want %v", step.p, step.delete, got, step.counted)
		}
	}
}

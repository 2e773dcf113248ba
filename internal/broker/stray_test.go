package broker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// umOf is an UpdateMetadata v8 of the topics given, each partition with
// its replicas (leader the first), full or not.
func umOf(full bool, topics map[string]map[int32][]int32) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 8, 0, 1, testBrokerEpoch
	names := make([]string, 0, len(topics))
	for name := range topics {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = name, topicA
		for p, rs := range topics[name] {
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Partition, ps.Leader, ps.Replicas, ps.ISR = p, rs[0], rs, rs
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	if full {
		kafka.MarkFullUpdateMetadata(req)
	}
	return req
}

func TestStrayLogs(t *testing.T) {
	tp := func(topic string, p int32) kafka.TopicPartition {
		return kafka.TopicPartition{Topic: topic, Partition: p}
	}
	full := umOf(true, map[string]map[int32][]int32{
		"a": {0: {1, 2}, 1: {2, 3}}, // a-1 reassigned away from 1
		"c": {0: {3, 1}},
	})
	unhosted := []kafka.TopicPartition{tp("a", 0), tp("a", 1), tp("a", 2), tp("b", 0), tp("c", 0)}
	want := []kafka.TopicPartition{tp("a", 1), tp("a", 2), tp("b", 0)} // a-2 and b: no such partition, no such topic
	if got := strayLogs(1, full, unhosted); !slices.Equal(got, want) {
		t.Fatalf("strays %v, want %v", got, want)
	}
	if got := strayLogs(1, full, nil); got != nil {
		t.Fatalf("strays of nothing: %v", got)
	}
}

// A full snapshot sets aside, as -stray directories, the logs on disk that
// it does not give to this broker and that no LeaderAndIsr hosts; an
// UpdateMetadata that is not full, and the hosted partitions, are left
// alone.
func TestControlFullUpdateMetadataSetsStraysAside(t *testing.T) {
	f := newControlFixture(t)
	ctx := context.Background()
	tp := func(topic string) kafka.TopicPartition { return kafka.TopicPartition{Topic: topic, Partition: 0} }
	for _, topic := range []string{"gone", "moved", "kept", "hosted"} {
		f.LeaderAndIsr(ctx, leaderAndIsr(1, testBrokerEpoch, lai{topic, topicA, 0, testNode, 0, []int32{testNode}}))
		writeOne(t, f, tp(topic))
		if topic != "hosted" { // a log on disk that this broker no longer hosts, as after a restart
			f.StopReplica(ctx, stopReplica(1, testBrokerEpoch, topic, 0, 0, false))
		}
	}
	topics := map[string]map[int32][]int32{"moved": {0: {2, 3}}, "kept": {0: {2, testNode}}}
	strays := func() []string {
		t.Helper()
		ents, err := os.ReadDir(f.dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), "-stray"); ok {
				out = append(out, name[:strings.IndexByte(name, '.')])
			}
		}
		slices.Sort(out)
		return out
	}
	if resp := f.UpdateMetadata(ctx, umOf(false, topics)); resp.ErrorCode != 0 || len(strays()) != 0 {
		t.Fatalf("an update that is not full: code %d, strays %v", resp.ErrorCode, strays())
	}
	if resp := f.UpdateMetadata(ctx, umOf(true, topics)); resp.ErrorCode != 0 {
		t.Fatalf("code %d", resp.ErrorCode)
	}
	if got, want := strays(), []string{"gone-0", "moved-0"}; !slices.Equal(got, want) {
		t.Fatalf("stray directories %v, want %v", got, want)
	}
	for _, topic := range []string{"kept", "hosted"} {
		if _, err := os.Stat(filepath.Join(f.dir, topic+"-0")); err != nil {
			t.Fatalf("%s-0: %v", topic, err)
		}
	}
	if f.logs.Get(tp("gone")) != nil || f.logs.Get(tp("kept")) == nil {
		t.Fatal("the storage still serves a stray log, or no longer one that is not")
	}
}

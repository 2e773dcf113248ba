package broker

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/record"
)

// TestCompactedTopic (issue 17): a cleanup.policy=compact topic with
// 200-byte segments on three brokers, fed one record per batch by
// franz-go over 5 keys, is compacted by every replica's cleaner: a
// consumer reads the latest value of each key and fewer records than were
// produced; each replica's log holds the same latest values; after the
// leader stops, the new leader serves them too.
func TestCompactedTopic(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"log.cleaner.backoff.ms": "50"})
	cl := newClient(t, controllerOf(t, brokers))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfgs := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("200"),
		"segment.ms": kadm.StringPtr("100")}
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, cfgs, "compacted"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	const produced = 200
	want := map[string]string{}
	for i := range produced {
		k, v := fmt.Sprintf("key-%d", i%5), strconv.Itoa(i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "compacted", Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "compacted", Value: []byte("no key")}).FirstErr(); err == nil {
		t.Fatal("a record without a key was accepted by a compacted topic")
	}
	start := time.Now()
	var n int
	for {
		var got map[string]string
		got, n = consumeLatest(t, ctx, brokers[0], "compacted", produced)
		if maps.Equal(got, want) && n < produced/2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("not compacted: %d records of %d, latest %v", n, produced, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("compacted to %d records of %d in %v", n, produced, time.Since(start))

	leader := leaderOf(t, ctx, cl, brokers, "compacted")
	end := leader.logs.Get(tpOf("compacted", 0)).LogEndOffset()
	for _, b := range brokers {
		for b.logs.Get(tpOf("compacted", 0)).HighWatermark() < end && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond) // the follower learns the high watermark on its next fetch
		}
		if got := logLatest(t, b, "compacted"); !maps.Equal(got, want) {
			t.Fatalf("broker %d log: latest %v, want %v", b.NodeID(), got, want)
		}
	}
	leader.Close()
	var other *Broker
	for _, b := range brokers {
		if b != leader {
			other = b
			break
		}
	}
	for {
		got, _ := consumeLatest(t, ctx, other, "compacted", 1)
		if maps.Equal(got, want) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("new leader serves %v, want %v", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// consumeLatest reads the topic from the start through b until the high
// watermark reaches at least min records' worth of offsets, returning the
// latest value per key and the count of records read.
func consumeLatest(t *testing.T, ctx context.Context, b *Broker, topic string, minEnd int64) (map[string]string, int) {
	t.Helper()
	cl := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		return nil, 0
	}
	end, _ := ends.Lookup(topic, 0)
	if end.Offset < minEnd {
		return nil, 0
	}
	latest, n := map[string]string{}, 0
	for last := int64(-1); last < end.Offset-1; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return latest, n
		}
		fs.EachRecord(func(r *kgo.Record) {
			latest[string(r.Key)] = string(r.Value)
			n++
			last = r.Offset
		})
	}
	return latest, n
}

// logLatest reads a broker's replica log of partition 0 below its high
// watermark, checking offsets increase, and returns the latest value per
// key.
func logLatest(t *testing.T, b *Broker, topic string) map[string]string {
	t.Helper()
	l := b.logs.Get(tpOf(topic, 0))
	latest, last := map[string]string{}, int64(-1)
	for off := l.LogStartOffset(); off < l.HighWatermark(); {
		res, err := l.Read(off, l.HighWatermark(), 1<<20, true)
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("broker %d read at %d: %v", b.NodeID(), off, err)
		}
		for p := 0; p < len(res.Records); {
			h, _ := record.ReadHeader(res.Records[p:])
			record.Records(res.Records[p:p+h.Size()], func(r record.Record) bool {
				if r.Offset <= last {
					t.Fatalf("broker %d: offset %d after %d", b.NodeID(), r.Offset, last)
				}
				last = r.Offset
				latest[string(r.Key)] = string(r.Value)
				return true
			})
			p += h.Size()
			off = h.LastOffset() + 1
		}
	}
	return latest
}

// leaderOf returns the broker leading partition 0 of topic.
func leaderOf(t *testing.T, ctx context.Context, cl *kgo.Client, brokers []*Broker, topic string) *Broker {
	t.Helper()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	id := td[topic].Partitions[0].Leader
	for _, b := range brokers {
		if b.NodeID() == id {
			return b
		}
	}
	t.Fatalf("no broker %d", id)
	return nil
}

// TestLogConfigCleanupPolicy: cleanup.policy and the compaction configs
// reach the log config, also as changed at run time (applyTopicConfig
// resolves the topic's overrides through the same path).
func TestLogConfigCleanupPolicy(t *testing.T) {
	b := &Broker{cfg: mustLoad(t)}
	for _, tc := range []struct {
		policy            string
		compact, noDelete bool
	}{{"delete", false, false}, {"compact", true, true}, {"compact,delete", true, false}} {
		pc, err := b.partitionConfig(map[string]string{"cleanup.policy": tc.policy, "delete.retention.ms": "5",
			"min.compaction.lag.ms": "6", "max.compaction.lag.ms": "7", "min.cleanable.dirty.ratio": "0.25"})
		if err != nil {
			t.Fatal(err)
		}
		l := pc.Log
		if l.Compact != tc.compact || l.NoDelete != tc.noDelete || l.DeleteRetentionMs != 5 || l.MinCompactionLagMs != 6 ||
			l.MaxCompactionLagMs != 7 || l.MinCleanableRatio != 0.25 {
			t.Errorf("%s: %+v", tc.policy, l)
		}
	}
}

func mustLoad(t *testing.T) *config.Broker {
	t.Helper()
	cfg, _, err := config.Load(map[string]string{"broker.id": "0", "log.dirs": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

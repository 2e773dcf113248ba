package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/record"
)

// TestDynamicConfigs changes configs of a running 3-broker cluster the
// kafka-configs.sh way, with kadm and with `samsa configs`, and watches
// every replica apply them on disk with no restart: segment.bytes (new
// segments roll at 1 KiB) and retention.ms (the next retention pass
// deletes the old segments); a broker restarted afterwards still applies
// them; a cluster-wide dynamic default (log.retention.ms) applies to topics
// without an override, and a per-broker value overrides it on its broker
// until deleted; message.timestamp.before.max.ms refuses old records until
// removed.
func TestDynamicConfigs(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, "log.retention.check.interval.ms=200", "log.segment.delete.delay.ms=0")
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	bs := strings.Join(c.addrs(-1), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	createTopic(ctx, t, adm, "dyn", nil)
	produceN(ctx, t, cl, "dyn", 20)
	one := "1024"
	res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: &one}}, "dyn")
	if err != nil || res[0].Err != nil {
		t.Fatalf("kadm alter segment.bytes: %v %+v", err, res)
	}
	produceN(ctx, t, cl, "dyn", 40)
	c.waitReplicas(t, "every replica rolls 1 KiB segments", "dyn-0", func(bases []int64) bool { return len(bases) >= 3 })

	// A follower restarted afterwards still rolls 1 KiB segments: the
	// records produced after its restart land in several segments there.
	first := c.follower(ctx, t, adm, "dyn", -1)
	c.restartFollower(ctx, t, adm, "dyn", first)
	h := produceN(ctx, t, cl, "dyn", 40) - 40
	c.waitBroker(t, first, fmt.Sprintf("restarted broker %d rolls 1 KiB segments after offset %d", first, h), "dyn-0",
		func(bases []int64) bool { return len(bases) >= 3 && bases[len(bases)-3] > h })

	if out, code := samsaConfigs(t, "--bootstrap-server", bs, "--alter", "--entity-type", "topics", "--entity-name", "dyn", "--add-config", "retention.ms=1000"); code != 0 || out != "Completed updating config for topic dyn.\n" {
		t.Fatalf("samsa configs --alter: exit %d\n%s", code, out)
	}
	c.waitReplicas(t, "every replica's retention pass deletes the first segment", "dyn-0", func(bases []int64) bool { return len(bases) > 0 && bases[0] > 0 })
	out, code := samsaConfigs(t, "--bootstrap-server", bs, "--describe", "--entity-type", "topics", "--entity-name", "dyn")
	for _, want := range []string{"Dynamic configs for topic dyn are:\n",
		"  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000",
		"  segment.bytes=1024 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=1024"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("describe: exit %d, no %q in\n%s", code, want, out)
		}
	}

	// The other follower, restarted afterwards, still deletes by
	// retention.ms: every segment before the records produced after its
	// restart goes (the default, 7 days, would keep them).
	second := c.follower(ctx, t, adm, "dyn", first)
	c.restartFollower(ctx, t, adm, "dyn", second)
	end := produceN(ctx, t, cl, "dyn", 10)
	c.waitBroker(t, second, fmt.Sprintf("restarted broker %d deletes every segment before offset %d", second, end), "dyn-0",
		func(bases []int64) bool { return len(bases) > 0 && bases[0] >= end })

	testBrokerDynamicConfigs(ctx, t, c, adm, cl, bs)
	testTimestampBounds(ctx, t, adm, cl)
	testCompressionType(ctx, t, c, adm)
}

// testCompressionType: a topic with compression.type=zstd stores an
// uncompressed producer's records zstd-compressed on every replica, and a
// consumer reads them back unchanged.
func testCompressionType(ctx context.Context, t *testing.T, c *cluster, adm *kadm.Client) {
	zstd, forever := "zstd", "-1" // no retention: the segments stay to be read
	createTopic(ctx, t, adm, "zstd", map[string]*string{"compression.type": &zstd, "retention.ms": &forever})
	pcl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("value %d %s", i, strings.Repeat("z", 100)))
		if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: "zstd", Value: []byte(want[i])}).FirstErr(); err != nil {
			t.Fatalf("produce to a zstd topic: %v", err)
		}
	}
	for id := range c.procs {
		deadline := time.Now().Add(30 * time.Second)
		for {
			n, codecs := storedBatches(filepath.Join(c.dirs[id], "zstd-0"))
			if n == 20 && len(codecs) == 1 && codecs[record.CompressionZstd] {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("broker %d: %d records stored, codecs %v; want 20, all zstd", id, n, codecs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ccl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...), kgo.ConsumeTopics("zstd"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer ccl.Close()
	var got []string
	for len(got) < len(want) && ctx.Err() == nil {
		ccl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, want) {
		t.Fatalf("consumed %d records from the zstd topic, not the %d produced", len(got), len(want))
	}
}

// storedBatches reads the batches of a partition directory's segment
// files: how many records they hold and which codecs they are stored in.
func storedBatches(dir string) (int, map[int8]bool) {
	n, codecs := 0, map[int8]bool{}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var b []byte
	for _, seg := range segs {
		data, _ := os.ReadFile(seg)
		b = append(b, data...)
	}
	for len(b) > 0 {
		h, err := record.ReadHeader(b)
		if err != nil || h.Size() > len(b) {
			break
		}
		n += int(h.NumRecords)
		codecs[h.Compression()] = true
		b = b[h.Size():]
	}
	return n, codecs
}

// testTimestampBounds: a topic with message.timestamp.before.max.ms of an
// hour refuses a day-old record with INVALID_TIMESTAMP and takes it once
// the bound is removed at run time.
func testTimestampBounds(ctx context.Context, t *testing.T, adm *kadm.Client, cl *kgo.Client) {
	hour := "3600000"
	createTopic(ctx, t, adm, "stamps", map[string]*string{"message.timestamp.before.max.ms": &hour})
	dayOld := func() *kgo.Record {
		return &kgo.Record{Topic: "stamps", Value: []byte("late"), Timestamp: time.Now().Add(-24 * time.Hour)}
	}
	if _, err := cl.ProduceSync(ctx, dayOld()).First(); !errors.Is(err, kerr.InvalidTimestamp) {
		t.Fatalf("a day-old record with an hour allowed: %v, want INVALID_TIMESTAMP", err)
	}
	if res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "message.timestamp.before.max.ms"}}, "stamps"); err != nil || res[0].Err != nil {
		t.Fatalf("delete message.timestamp.before.max.ms: %v %+v", err, res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cl.ProduceSync(ctx, dayOld()).First()
		if err == nil {
			return
		}
		if !errors.Is(err, kerr.InvalidTimestamp) || time.Now().After(deadline) {
			t.Fatalf("a day-old record once the bound is gone: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testBrokerDynamicConfigs: log.retention.ms at <default> and per broker.
func testBrokerDynamicConfigs(ctx context.Context, t *testing.T, c *cluster, adm *kadm.Client, cl *kgo.Client, bs string) {
	seg := "1024"
	createTopic(ctx, t, adm, "dyn2", map[string]*string{"segment.bytes": &seg})
	// The keeper is the leader: a follower's log start offset follows its
	// leader's (as Kafka's), so a follower keeping 1 h would still lose
	// its first segment once the leader's 1 s retention moved it.
	keeper := c.leaderOf(ctx, t, adm, "dyn2")
	hour := "3600000"
	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: &hour}}, keeper)
	if err != nil || res[0].Err != nil {
		t.Fatalf("kadm alter broker %d: %v %+v", keeper, err, res)
	}
	produceN(ctx, t, cl, "dyn2", 40)
	if out, code := samsaConfigs(t, "--bootstrap-server", bs, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=1000"); code != 0 || out != "Completed updating default config for brokers in the cluster.\n" {
		t.Fatalf("alter <default>: exit %d\n%s", code, out)
	}
	for id := range c.procs {
		if id != keeper {
			c.waitBroker(t, id, fmt.Sprintf("broker %d applies the <default> log.retention.ms", id), "dyn2-0",
				func(bases []int64) bool { return len(bases) > 0 && bases[0] > 0 })
		}
	}
	want := "Default configs for brokers in the cluster are:\n  log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000}\n"
	if out, code := samsaConfigs(t, "--bootstrap-server", bs, "--describe", "--entity-type", "brokers", "--entity-default"); code != 0 || out != want {
		t.Fatalf("describe <default>: exit %d\n%s\nwant\n%s", code, out, want)
	}
	name := strconv.Itoa(int(keeper))
	out, code := samsaConfigs(t, "--bootstrap-server", bs, "--describe", "--entity-type", "brokers", "--entity-name", name)
	if wantLine := "  log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=3600000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000"; code != 0 || !strings.Contains(out, wantLine) {
		t.Fatalf("describe broker %s: exit %d, no %q in\n%s", name, code, wantLine, out)
	}
	if bases := segmentBases(t, c.dirs[keeper], "dyn2-0"); len(bases) == 0 || bases[0] != 0 {
		t.Fatalf("broker %d has its own log.retention.ms (1 h) but deleted its first segment: %v", keeper, bases)
	}
	if out, code := samsaConfigs(t, "--bootstrap-server", bs, "--alter", "--entity-type", "brokers", "--entity-name", name, "--delete-config", "log.retention.ms"); code != 0 {
		t.Fatalf("delete per-broker config: exit %d\n%s", code, out)
	}
	c.waitBroker(t, keeper, fmt.Sprintf("broker %d falls back to the <default> log.retention.ms", keeper), "dyn2-0",
		func(bases []int64) bool { return len(bases) > 0 && bases[0] > 0 })
}

func samsaConfigs(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, errOut, code := samsaTool(t, 60*time.Second, "configs", args...)
	return out + errOut, code
}

// createTopic creates a one-partition topic on all three brokers.
func createTopic(ctx context.Context, t *testing.T, adm *kadm.Client, name string, configs map[string]*string) {
	t.Helper()
	for {
		res, err := adm.CreateTopic(ctx, 1, 3, configs, name)
		if err == nil && res.Err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("create %s: %v %v", name, err, res.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// produceN writes n records of 100 bytes with acks=all, one batch each
// (a segment rolls only between batches), and returns the offset after
// them.
func produceN(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, n int) int64 {
	t.Helper()
	var next int64
	for i := range n {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%0100d", i))}).First()
		if err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
		next = r.Offset + 1
	}
	return next
}

// follower is a replica of partition 0 of topic that neither leads it nor
// is except.
// leaderOf is the leader of topic's partition 0.
func (c *cluster) leaderOf(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) int32 {
	t.Helper()
	return partition0(ctx, t, adm, topic).Leader
}

// partition0 is topic's partition 0 as metadata describes it, once the
// broker asked knows the topic (just created, a broker may not yet: the
// controller's UpdateMetadata reaches each broker in its time).
func partition0(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) kadm.PartitionDetail {
	t.Helper()
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && td[topic].Err == nil && len(td[topic].Partitions) > 0 && td[topic].Partitions[0].Leader >= 0 {
			return td[topic].Partitions[0]
		}
		if ctx.Err() != nil {
			t.Fatalf("metadata of %s: %v %v", topic, err, td[topic].Err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) follower(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, except int32) int32 {
	t.Helper()
	p := partition0(ctx, t, adm, topic)
	for _, r := range p.Replicas {
		if r != p.Leader && r != except {
			return r
		}
	}
	t.Fatalf("%s: no follower in %v (leader %d, except %d)", topic, p.Replicas, p.Leader, except)
	return -1
}

// restartFollower stops broker id (SIGTERM), starts it again and waits
// until it is back in the ISR of topic's partition 0.
func (c *cluster) restartFollower(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, id int32) {
	t.Helper()
	c.procs[id].stop()
	c.start(id)
	waitInISR(ctx, t, adm, topic, id)
}

// waitInISR waits until broker id is in the ISR of partition 0 of topic
// (then acks=all records reach it one batch at a time).
func waitInISR(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, id int32) {
	t.Helper()
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && td[topic].Err == nil && slices.Contains(td[topic].Partitions[0].ISR, id) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("broker %d never rejoined the ISR of %s: %v", id, topic, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// segmentBases lists the base offsets of a partition's segments on one
// broker, from its .log files, in order.
func segmentBases(t *testing.T, dir, partition string) []int64 {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, partition, "*.log"))
	var out []int64
	for _, n := range names {
		if base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(n), ".log"), 10, 64); err == nil {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out
}

// waitBroker waits until cond holds for a partition's segments on broker id.
func (c *cluster) waitBroker(t *testing.T, id int32, what, partition string, cond func(bases []int64) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		bases := segmentBases(t, c.dirs[id], partition)
		if cond(bases) {
			return
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(filepath.Join(c.dirs[id], partition))
			var all []string
			for id := range c.procs {
				all = append(all, fmt.Sprintf("broker %d: %v", id, segmentBases(t, c.dirs[id], partition)))
			}
			t.Fatalf("%s: never happened; segments %v, files %d (%s)%s", what, bases, len(entries), strings.Join(all, "; "), c.logTails())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitReplicas is waitBroker on every broker.
func (c *cluster) waitReplicas(t *testing.T, what, partition string, cond func(bases []int64) bool) {
	t.Helper()
	for id := range c.procs {
		c.waitBroker(t, id, fmt.Sprintf("%s (broker %d)", what, id), partition, cond)
	}
}

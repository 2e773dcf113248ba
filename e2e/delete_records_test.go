package e2e

// DeleteRecords with kadm against three brokers: the leader answers once
// every in-sync replica raised its log start offset; ListOffsets earliest
// and a consumer from the start begin there, on the leader and, after the
// leader is killed, on the new one; samsa delete-records prints
// kafka-delete-records.sh's report.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestDeleteRecordsSurvivesLeaderKill(t *testing.T) {
	const topic = "purge"
	c, all, v, cl := deleteRecordsCluster(t, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 100 {
		r := &kgo.Record{Partition: 0, Value: []byte(fmt.Sprint(i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	var req kadm.Offsets
	req.Add(kadm.Offset{Topic: topic, Partition: 0, At: 40})
	res, err := adm.DeleteRecords(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup(topic, 0); r.Err != nil || r.LowWatermark != 40 {
		t.Fatalf("DeleteRecords to 40: low watermark %d, %v", r.LowWatermark, r.Err)
	}
	var beyond kadm.Offsets
	beyond.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1000})
	res, err = adm.DeleteRecords(ctx, beyond)
	if r, _ := res.Lookup(topic, 0); err != nil || !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("DeleteRecords beyond the high watermark: %v %v, want OFFSET_OUT_OF_RANGE", err, r.Err)
	}
	checkStart(t, all, topic, 40)

	victim := v[0].leader
	c.procs[victim].kill()
	others := c.addrs(victim)
	c.waitPartitions(others, topic, "a new leader for partition 0", func(v map[int32]partitionView) bool {
		return v[0].leader >= 0 && v[0].leader != victim
	})
	checkStart(t, others, topic, 40)

	// The old leader comes back as a follower; samsa delete-records then
	// moves the start again, acknowledged by all three.
	c.start(victim)
	c.waitPartitions(all, topic, "full ISR after the restart", fullISR(3))
	file := filepath.Join(t.TempDir(), "offsets.json")
	if err := os.WriteFile(file, []byte(`{"partitions":[{"topic":"purge","partition":0,"offset":60}],"version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := samsaTool(t, time.Minute, "delete-records", "--bootstrap-server", strings.Join(all, ","), "--offset-json-file", file)
	want := "Executing records delete operation\nRecords delete operation completed:\npartition: purge-0\tlow_watermark: 60\n"
	if code != 0 || out != want {
		t.Fatalf("samsa delete-records: exit %d\n%s\nwant\n%s\nstderr: %s", code, out, want, errOut)
	}
	checkStart(t, all, topic, 60)
}

// DeleteRecords after retention moved every replica's log start offset:
// the followers' retention reaches the leader through their fetches, so a
// DeleteRecords at or below that start, or at the high watermark, is
// answered at once with the low watermark, as Kafka answers it (before,
// the followers' new start never reached the leader and it answered
// REQUEST_TIMED_OUT).
func TestDeleteRecordsAfterRetention(t *testing.T) {
	const topic = "expiring"
	_, _, _, cl := deleteRecordsCluster(t, topic, "log.retention.check.interval.ms=200")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	old := time.Now().Add(-48 * time.Hour)
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte(fmt.Sprint(i)), Timestamp: old}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("86400000")}}, topic); err != nil {
		t.Fatal(err)
	}
	for {
		starts, err := adm.ListStartOffsets(ctx, topic)
		if o, _ := starts.Lookup(topic, 0); err == nil && o.Offset == 20 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("retention never deleted the day-old records")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, at := range []int64{5, 20, -1} {
		var req kadm.Offsets
		req.Add(kadm.Offset{Topic: topic, Partition: 0, At: at})
		res, err := adm.DeleteRecords(ctx, req)
		if r, _ := res.Lookup(topic, 0); err != nil || r.Err != nil || r.LowWatermark != 20 {
			t.Fatalf("DeleteRecords to %d after retention: low watermark %d, %v %v; want 20", at, r.LowWatermark, err, r.Err)
		}
	}
}

// deleteRecordsCluster starts three brokers (extra: more server settings),
// creates topic with three replicas and waits for their full ISR; it
// returns the cluster, its addresses, the topic's partitions and a client
// producing to topic by partition number, closed with the test.
func deleteRecordsCluster(t *testing.T, topic string, extra ...string) (*cluster, []string, map[int32]partitionView, *kgo.Client) {
	t.Helper()
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, extra...)
	all := c.addrs(-1)
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	c.createTopic(all, topic, 3)
	v := c.waitPartitions(all, topic, "full ISR", fullISR(3))
	cl, err := kgo.NewClient(kgo.SeedBrokers(all...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, all, v, cl
}

// checkStart checks ListOffsets earliest of partition 0 and the first
// record a consumer from the start gets.
func checkStart(t *testing.T, addrs []string, topic string, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	starts, err := kadm.NewClient(cl).ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup(topic, 0); o.Err != nil || o.Offset != want {
		t.Fatalf("ListOffsets earliest: %d %v, want %d", o.Offset, o.Err, want)
	}
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no record consumed from the start")
		}
		var first *kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			if first == nil {
				first = r
			}
		})
		if first != nil {
			if first.Offset != want || string(first.Value) != fmt.Sprint(want) {
				t.Fatalf("first record consumed: offset %d %q, want %d", first.Offset, first.Value, want)
			}
			return
		}
	}
}

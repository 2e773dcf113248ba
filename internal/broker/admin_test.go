package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func ptr(s string) *string { return &s }

// TestCreateTopicErrors checks Kafka's per-topic error codes.
func TestCreateTopicErrors(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	createTopic(t, cl, "exists", 2, nil)
	cases := []struct {
		name    string
		parts   int32
		rf      int16
		configs map[string]*string
		want    error
	}{
		{"exists", 1, 1, nil, kerr.TopicAlreadyExists},
		{"bad/name", 1, 1, nil, kerr.InvalidTopicException},
		{"..", 1, 1, nil, kerr.InvalidTopicException},
		{strings.Repeat("x", 250), 1, 1, nil, kerr.InvalidTopicException},
		{"zero-parts", 0, 1, nil, kerr.InvalidPartitions},
		{"rf-too-big", 1, 3, nil, kerr.InvalidReplicationFactor},
		{"bad-config", 1, 1, map[string]*string{"no.such.config": ptr("1")}, kerr.InvalidConfig},
		{"bad-value", 1, 1, map[string]*string{"retention.ms": ptr("abc")}, kerr.InvalidConfig},
	}
	for _, c := range cases {
		res, _ := adm.CreateTopic(ctx, c.parts, c.rf, c.configs, c.name)
		if res.Err != c.want {
			t.Errorf("create %.20q: got %v, want %v", c.name, res.Err, c.want)
		}
	}
	// validateOnly creates nothing.
	if _, err := adm.ValidateCreateTopics(ctx, 1, 1, nil, "validated"); err != nil {
		t.Fatal(err)
	}
	td, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if td.Has("validated") || !td.Has("exists") || len(td["exists"].Partitions) != 2 {
		t.Fatalf("topics after validateOnly: %v", td.Names())
	}
	// Deleting an unknown topic.
	dr, err := adm.DeleteTopics(ctx, "nope")
	if err != nil {
		t.Fatal(err)
	}
	if dr["nope"].Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("delete unknown: %v", dr["nope"].Err)
	}
}

// TestDeleteRecreate: a deleted topic's directories are renamed -delete and
// later removed; a re-created topic of the same name gets a new id and none
// of the old data, also after a restart.
func TestDeleteRecreate(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, map[string]string{"log.segment.delete.delay.ms": "0", "log.retention.check.interval.ms": "50"})
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	createTopic(t, cl, "again", 2, nil)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "again", Partition: 0, Value: []byte("old")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	td, _ := adm.ListTopics(ctx, "again")
	oldID := td["again"].ID
	if _, err := adm.DeleteTopic(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m, _ := filepath.Glob(filepath.Join(dir, "again-*"))
		if len(m) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("directories not removed: %v", m)
		}
	}
	// The replicas' directories go before the controller has removed the
	// topic from the store; until then a create is TOPIC_ALREADY_EXISTS
	// (Kafka: "marked for deletion"), and a user tries again. (kadm's
	// CreateTopic returns the topic's own error as its error.)
	for {
		_, err := adm.CreateTopic(ctx, 2, 1, nil, "again")
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) || ctx.Err() != nil {
			t.Fatalf("re-create: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	td, _ = kadm.NewClient(newClient(t, b)).ListTopics(ctx, "again") // a new client: kadm caches metadata
	if td["again"].ID == oldID {
		t.Fatalf("re-created topic kept the old id %x", oldID)
	}
	ends, err := adm.ListEndOffsets(ctx, "again")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("again", 0); o.Offset != 0 {
		t.Fatalf("re-created topic has old data: end offset %d", o.Offset)
	}
	// Written, the re-created partition has a directory of its own again.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "again", Partition: 0, Value: []byte("new")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := os.Stat(filepath.Join(dir, "again-0", "partition.metadata")); err != nil {
		t.Fatal(err)
	}
}

// TestDescribeConfigs reads topic overrides and broker configs with sources.
// (log.retention.ms, not .hours: Kafka reports retention.ms's source from
// log.retention.ms's synonyms only.)
func TestDescribeConfigs(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"log.retention.ms": "86400000"})
	cl := newClient(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	createTopic(t, cl, "cfg", 1, map[string]*string{"segment.bytes": ptr("1048576")})
	adm := kadm.NewClient(cl)
	rcs, err := adm.DescribeTopicConfigs(ctx, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("cfg", nil)
	if err != nil || rc.Err != nil {
		t.Fatal(err, rc.Err)
	}
	got := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		got[c.Key] = c
	}
	if c := got["segment.bytes"]; c.MaybeValue() != "1048576" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("segment.bytes: %+v", c)
	}
	if c := got["retention.ms"]; c.MaybeValue() != "86400000" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("retention.ms: %+v", c)
	}
	brs, err := adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range brs[0].Configs {
		if c.Key == "log.retention.ms" {
			found = c.MaybeValue() == "86400000" && c.Source == kmsg.ConfigSourceStaticBrokerConfig
		}
	}
	if !found {
		t.Errorf("broker config log.retention.ms not described as set statically")
	}
}

// TestRetentionMovesLogStart: small segments and a size limit make the log
// manager delete old segments, which ListOffsets shows as a moving log start.
func TestRetentionMovesLogStart(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"log.retention.check.interval.ms": "50"})
	cl := newClient(t, b, kgo.ProducerLinger(0))
	createTopic(t, cl, "ret", 1, map[string]*string{"segment.bytes": ptr("4096"), "retention.bytes": ptr("8192")})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 100 {
		v := make([]byte, 500)
		rand.Read(v) // incompressible: the client compresses batches
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "ret", Value: v, Key: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	for {
		l, err := adm.ListStartOffsets(ctx, "ret")
		if err != nil {
			t.Fatal(err)
		}
		if o, _ := l.Lookup("ret", 0); o.Offset > 50 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("log start offset never moved past 50")
		case <-time.After(50 * time.Millisecond):
		}
	}
	end, _ := adm.ListEndOffsets(ctx, "ret")
	if o, _ := end.Lookup("ret", 0); o.Offset != 100 {
		t.Fatalf("end offset %d", o.Offset)
	}
}

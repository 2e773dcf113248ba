package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// TestCreateMany: new, existing and repeated partitions in one call. After
// a reopen only the partition written to is back, with its topic id and
// record; the empty ones left nothing on disk and are created again.
func TestCreateMany(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	existing, _ := m.Create(kafka.TopicPartition{Topic: "a", Partition: 0}, topic, DefaultLogConfig())
	mustAppend(t, existing, 1, "x", 1)
	cfg := DefaultLogConfig()
	cfg.RetentionMs = 1234
	var reqs []CreateRequest
	for p := range 50 {
		reqs = append(reqs, CreateRequest{kafka.TopicPartition{Topic: "a", Partition: int32(p)}, topic, cfg})
	}
	reqs = append(reqs, reqs[7]) // named twice
	logs, err := m.CreateMany(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if logs[0] != existing || logs[50] != logs[7] || len(m.Partitions()) != 50 {
		t.Fatalf("existing or repeated partition not reused, %d partitions", len(m.Partitions()))
	}
	for i, l := range logs {
		if l == nil || l.tp != reqs[i].TopicPartition || l.config().RetentionMs != 1234 || l.TopicID() != topic {
			t.Fatalf("log %d: %+v", i, l)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openManager(t, dir)
	defer m.Close()
	if got := m.Partitions(); len(got) != 1 || got[0] != (kafka.TopicPartition{Topic: "a", Partition: 0}) {
		t.Fatalf("partitions after reopen: %v", got)
	}
	if id := m.Get(kafka.TopicPartition{Topic: "a", Partition: 0}).TopicID(); id != topic {
		t.Fatalf("topic id %x", id)
	}
	if m.Get(kafka.TopicPartition{Topic: "a", Partition: 0}).LogEndOffset() != 1 {
		t.Fatal("existing log lost its record")
	}
	if _, err := m.CreateMany(reqs); err != nil || len(m.Partitions()) != 50 {
		t.Fatalf("create again: %v, %d partitions", err, len(m.Partitions()))
	}
}

// TestCreateRepairsTornMetadata: a partition whose creation a crash cut
// (directory there, partition.metadata empty) is completed when its owner
// creates it again.
func TestCreateRepairsTornMetadata(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "torn-3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "torn-3", partitionMetadataFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := openManager(t, dir) // no clean-shutdown marker: unclean
	defer m.Close()
	if _, err := m.Create(kafka.TopicPartition{Topic: "torn", Partition: 3}, topic, DefaultLogConfig()); err != nil {
		t.Fatal(err)
	}
	if id, err := readPartitionMetadata(filepath.Join(dir, "torn-3")); err != nil || id != topic {
		t.Fatalf("partition.metadata not rewritten: %x %v", id, err)
	}
}

// TestConcurrentCreateMany: overlapping batches from several goroutines
// create each partition once. Run with -race.
func TestConcurrentCreateMany(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	const workers, n = 4, 100
	got := make([][]*Log, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reqs := make([]CreateRequest, n)
			for i := range reqs {
				reqs[i] = CreateRequest{kafka.TopicPartition{Topic: "c", Partition: int32((i + w*10) % n)}, topic, DefaultLogConfig()}
			}
			logs, err := m.CreateMany(reqs)
			if err != nil {
				t.Error(err)
			}
			got[w] = logs
		}()
	}
	wg.Wait()
	for w, logs := range got {
		for _, l := range logs {
			if m.Get(l.tp) != l {
				t.Fatalf("worker %d holds a log for %s the manager does not", w, l.tp)
			}
		}
	}
	if len(m.Partitions()) != n {
		t.Fatalf("%d partitions", len(m.Partitions()))
	}
}

// TestCreateManyRollsBack: a partition whose directory exists unknown to
// the manager fails the batch; nothing of it is registered or made, the
// foreign directory is left alone.
func TestCreateManyRollsBack(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	if err := os.Mkdir(filepath.Join(dir, "x-1"), 0o755); err != nil { // appeared after open
		t.Fatal(err)
	}
	_, err := m.CreateMany([]CreateRequest{
		{kafka.TopicPartition{Topic: "x", Partition: 0}, topic, DefaultLogConfig()},
		{kafka.TopicPartition{Topic: "x", Partition: 1}, topic, DefaultLogConfig()},
	})
	if err == nil {
		t.Fatal("no error")
	}
	if len(m.Partitions()) != 0 {
		t.Fatalf("registered %v", m.Partitions())
	}
	if _, err := os.Stat(filepath.Join(dir, "x-0")); !os.IsNotExist(err) {
		t.Fatalf("x-0 left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x-1")); err != nil {
		t.Fatalf("foreign x-1 removed: %v", err)
	}
	if _, err := m.Create(kafka.TopicPartition{Topic: "x", Partition: 0}, topic, DefaultLogConfig()); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

// TestCreateTopics: partitions of several topics in one call, a topic named
// twice with another config, a partition named twice and an existing one.
// New logs get their TopicLogs' config (one value shared by the topic's
// logs), the first mention wins for a new partition named twice, every
// mention reconfigures an existing one, and new logs are spread over the
// log dirs.
func TestCreateTopics(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir(), t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	existing, _ := m.Create(kafka.TopicPartition{Topic: "b", Partition: 0}, topic, DefaultLogConfig())
	mustAppend(t, existing, 1, "x", 1)
	cfg := func(retention int64) LogConfig {
		c := DefaultLogConfig()
		c.RetentionMs = retention
		return c
	}
	ts := []TopicLogs{
		{Topic: "a", TopicID: topic, Config: cfg(1), Partitions: []int32{0, 1, 2}},
		{Topic: "b", TopicID: topic, Config: cfg(2), Partitions: []int32{5, 0}},
		{Topic: "a", TopicID: topic, Config: cfg(3), Partitions: []int32{2, 3}},
	}
	logs, err := m.CreateTopics(ts)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tp        kafka.TopicPartition
		retention int64
	}{{kafka.TopicPartition{Topic: "a", Partition: 0}, 1}, {kafka.TopicPartition{Topic: "a", Partition: 1}, 1}, {kafka.TopicPartition{Topic: "a", Partition: 2}, 1},
		{kafka.TopicPartition{Topic: "b", Partition: 5}, 2}, {kafka.TopicPartition{Topic: "b", Partition: 0}, 2}, {kafka.TopicPartition{Topic: "a", Partition: 2}, 1}, {kafka.TopicPartition{Topic: "a", Partition: 3}, 3}}
	if len(logs) != len(want) {
		t.Fatalf("%d logs, want %d", len(logs), len(want))
	}
	for i, w := range want {
		if l := logs[i]; l.tp != w.tp || l.config().RetentionMs != w.retention || m.Get(w.tp) != l || l.TopicID() != topic {
			t.Errorf("log %d: %s retention %d, want %s %d", i, l.tp, l.config().RetentionMs, w.tp, w.retention)
		}
	}
	if logs[4] != existing || logs[5] != logs[2] || logs[0].config() != logs[1].config() {
		t.Fatal("existing or repeated log not reused, or a topic's config not shared")
	}
	if n := len(m.Partitions()); n != 6 || m.dirs[0].count != 3 || m.dirs[1].count != 3 {
		t.Fatalf("%d partitions, %d and %d per dir", n, m.dirs[0].count, m.dirs[1].count)
	}
	kept, err := m.CreateTopics([]TopicLogs{{Topic: "b", TopicID: topic, Config: cfg(4), Partitions: []int32{0, 6}, KeepExisting: true}})
	if err != nil || kept[0] != existing || existing.config().RetentionMs != 2 || kept[1].config().RetentionMs != 4 {
		t.Fatalf("KeepExisting: %v; existing reconfigured to %d", err, existing.config().RetentionMs)
	}
}

// topicRuns groups consecutive requests of one topic, topic id and config.
func TestTopicRuns(t *testing.T) {
	other := DefaultLogConfig()
	other.SegmentMs = 1
	req := func(topicName string, p int32, id byte, cfg LogConfig) CreateRequest {
		return CreateRequest{kafka.TopicPartition{Topic: topicName, Partition: p}, [16]byte{id}, cfg}
	}
	d := DefaultLogConfig()
	runs := topicRuns([]CreateRequest{req("a", 0, 1, d), req("a", 1, 1, d), req("a", 2, 1, other), req("a", 3, 2, other),
		req("b", 4, 2, other), req("b", 5, 2, other), req("a", 6, 2, other)})
	want := [][]int32{{0, 1}, {2}, {3}, {4, 5}, {6}}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d: %+v", len(runs), len(want), runs)
	}
	for i, r := range runs {
		if fmt.Sprint(r.Partitions) != fmt.Sprint(want[i]) {
			t.Errorf("run %d: %v, want %v", i, r.Partitions, want[i])
		}
	}
}

// Creations and deletions of the same partitions racing: each partition is
// counted in its log dir once while registered, and no claim outlives its
// call. Run with -race.
func TestCreateDeleteRace(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	tps := make([]kafka.TopicPartition, 50)
	for i := range tps {
		tps[i] = kafka.TopicPartition{Topic: "r", Partition: int32(i)}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if w%2 == 0 {
					ts := []TopicLogs{{Topic: "r", TopicID: topic, Config: DefaultLogConfig(), Partitions: []int32{int32(w), 7, 8, 9, 10, 49}}}
					if _, err := m.CreateTopics(ts); err != nil {
						t.Error(err)
					}
				} else if err := m.DeleteMany(tps); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.creating.Len() != 0 || m.dirs[0].count != m.logs.Len() {
		t.Fatalf("%d claims left, dir counts %d of %d logs", m.creating.Len(), m.dirs[0].count, m.logs.Len())
	}
}

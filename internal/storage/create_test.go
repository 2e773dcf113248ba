package storage

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestCreateMany: new, existing and repeated partitions in one call. After
// a reopen only the partition written to is back, with its topic id and
// record; the empty ones left nothing on disk and are created again.
func TestCreateMany(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	existing, _ := m.Create(TopicPartition{"a", 0}, topic, DefaultLogConfig())
	mustAppend(t, existing, 1, "x", 1)
	cfg := DefaultLogConfig()
	cfg.RetentionMs = 1234
	var reqs []CreateRequest
	for p := range 50 {
		reqs = append(reqs, CreateRequest{TopicPartition{"a", int32(p)}, topic, cfg})
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
		if l == nil || l.tp != reqs[i].TopicPartition || l.cfg.RetentionMs != 1234 || l.TopicID() != topic {
			t.Fatalf("log %d: %+v", i, l)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openManager(t, dir)
	defer m.Close()
	if got := m.Partitions(); len(got) != 1 || got[0] != (TopicPartition{"a", 0}) {
		t.Fatalf("partitions after reopen: %v", got)
	}
	if id := m.Get(TopicPartition{"a", 0}).TopicID(); id != topic {
		t.Fatalf("topic id %x", id)
	}
	if m.Get(TopicPartition{"a", 0}).LogEndOffset() != 1 {
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
	if _, err := m.Create(TopicPartition{"torn", 3}, topic, DefaultLogConfig()); err != nil {
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
				reqs[i] = CreateRequest{TopicPartition{"c", int32((i + w*10) % n)}, topic, DefaultLogConfig()}
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
		{TopicPartition{"x", 0}, topic, DefaultLogConfig()},
		{TopicPartition{"x", 1}, topic, DefaultLogConfig()},
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
	if _, err := m.Create(TopicPartition{"x", 0}, topic, DefaultLogConfig()); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

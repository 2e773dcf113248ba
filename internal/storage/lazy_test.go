package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// subdirs lists the directories in a log dir.
func subdirs(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func lazyReqs(n int, cfg LogConfig) []CreateRequest {
	out := make([]CreateRequest, n)
	for i := range out {
		out[i] = CreateRequest{kafka.TopicPartition{Topic: "lazy", Partition: int32(i)}, topic, cfg}
	}
	return out
}

// TestLazyCreateWritesNothing: 10k created partitions make no directory and
// open no fd; each answers as an empty log at offset 0, and none is left on
// disk (nor in the recovery checkpoint) after a clean Close.
func TestLazyCreateWritesNothing(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	fds := openFDs(t)
	logs, err := m.CreateMany(lazyReqs(10_000, DefaultLogConfig()))
	if err != nil {
		t.Fatal(err)
	}
	single, err := m.Create(kafka.TopicPartition{Topic: "single", Partition: 0}, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	logs = append(logs, single)
	if got := openFDs(t); got != fds {
		t.Fatalf("%d fds open after creating, %d before", got, fds)
	}
	if got := len(m.Partitions()); got != 10_001 {
		t.Fatalf("%d partitions listed", got)
	}
	for _, l := range []*Log{logs[0], logs[9_999], single} {
		checkEmptyLog(t, l)
	}
	if d := subdirs(t, dir); len(d) != 0 {
		t.Fatalf("directories made: %v", d[:min(len(d), 5)])
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := subdirs(t, dir); len(d) != 0 {
		t.Fatalf("directories after Close: %v", d[:min(len(d), 5)])
	}
	cp, err := os.ReadFile(filepath.Join(dir, recoveryCheckpointFile))
	if err != nil || strings.Contains(string(cp), "lazy") {
		t.Fatalf("checkpoint lists lazy logs (%v):\n%.200s", err, cp)
	}
	if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); err != nil {
		t.Fatalf("no clean-shutdown marker: %v", err)
	}
	m = openManager(t, dir)
	defer m.Close()
	if got := m.Partitions(); len(got) != 0 {
		t.Fatalf("partitions after reopen: %v", got[:min(len(got), 5)])
	}
}

// checkEmptyLog runs every read-side call on a lazy log and checks the
// answers of an empty log at offset 0.
func checkEmptyLog(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Open(); err != nil {
		t.Fatal(err)
	}
	checkOnDisk(t, l)
	if leo, lso := l.LogEndOffset(), l.LogStartOffset(); leo != 0 || lso != 0 {
		t.Fatalf("%s: LEO %d, LSO %d", l.tp, leo, lso)
	}
	if res, err := l.Read(0, 1<<62, 1<<20, true); err != nil || !reflect.DeepEqual(res, ReadResult{}) {
		t.Fatalf("%s: Read(0) = %+v, %v", l.tp, res, err)
	}
	for _, off := range []int64{-1, 1, 100} {
		if _, err := l.Read(off, 1<<62, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("%s: Read(%d): %v", l.tp, off, err)
		}
	}
	if off, ts, found, err := l.OffsetForTimestamp(0); found || err != nil || off != -1 || ts != -1 {
		t.Fatalf("%s: OffsetForTimestamp = %d %d %v %v", l.tp, off, ts, found, err)
	}
	if ts, off, err := l.MaxTimestamp(); ts != -1 || off != -1 || err != nil {
		t.Fatalf("%s: MaxTimestamp = %d %d %v", l.tp, ts, off, err)
	}
	for _, to := range []int64{0, -1, 5} {
		if err := l.TruncateTo(to); err != nil {
			t.Fatalf("%s: Truncate(%d): %v", l.tp, to, err)
		}
	}
	if err := l.Flush(t0); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultLogConfig()
	cfg.RetentionMs = 7
	l.SetConfig(cfg)
	if l.TopicID() != topic || l.LogEndOffset() != 0 {
		t.Fatalf("%s: topic id %x, LEO %d", l.tp, l.TopicID(), l.LogEndOffset())
	}
	checkOnDisk(t, l)
}

// checkOnDisk checks that a log has its files' state exactly when it is not
// lazy.
func checkOnDisk(t *testing.T, l *Log) {
	t.Helper()
	l.mu.RLock()
	defer l.mu.RUnlock()
	if lazy, has := l.lazy.Load(), l.onDisk != nil; lazy == has {
		t.Fatalf("%s: lazy %v with files' state %v", l.tp, lazy, has)
	}
}

// TestLazyMaterializeOnAppend: the first append, leader or follower, makes
// exactly that partition's directory with partition.metadata; its data
// reads back after a clean and after an unclean reopen, and the partitions
// never written to are gone.
func TestLazyMaterializeOnAppend(t *testing.T) {
	for _, tc := range []struct {
		name     string
		follower bool
		clean    bool
	}{
		{"leader clean", false, true},
		{"leader unclean", false, false},
		{"follower clean", true, true},
		{"follower unclean", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := openManager(t, dir)
			logs, err := m.CreateMany(lazyReqs(5, DefaultLogConfig()))
			if err != nil {
				t.Fatal(err)
			}
			l := logs[3]
			if tc.follower {
				b, h := batch(10, "v", 3)
				if _, err := l.AppendAsFollower(b, h); err != nil {
					t.Fatal(err)
				}
			} else {
				mustAppend(t, l, 10, "v", 3)
			}
			mustAppend(t, l, 20, "w", 1)
			if d := subdirs(t, dir); !reflect.DeepEqual(d, []string{"lazy-3"}) {
				t.Fatalf("directories: %v", d)
			}
			if id, err := readPartitionMetadata(filepath.Join(dir, "lazy-3")); err != nil || id != topic {
				t.Fatalf("partition.metadata: %x %v", id, err)
			}
			want := []string{"0:v-0", "1:v-1", "2:v-2", "3:w-0"}
			if got := values(readAll(t, l, 0)); !reflect.DeepEqual(got, want) {
				t.Fatalf("before reopen: %v", got)
			}
			if tc.clean {
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				m.crash()
			}
			m = openManager(t, dir)
			defer m.Close()
			if got := m.Partitions(); !reflect.DeepEqual(got, []kafka.TopicPartition{{Topic: "lazy", Partition: 3}}) {
				t.Fatalf("partitions after reopen: %v", got)
			}
			l = m.Get(kafka.TopicPartition{Topic: "lazy", Partition: 3})
			if got := values(readAll(t, l, 0)); !reflect.DeepEqual(got, want) {
				t.Fatalf("after reopen: %v", got)
			}
			if l.TopicID() != topic {
				t.Fatalf("topic id %x", l.TopicID())
			}
		})
	}
}

// TestLazyMaterializeRefusesForeignDir: a directory that appeared after
// startup fails the first append; the log stays lazy and usable.
func TestLazyMaterializeRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l, err := m.Create(kafka.TopicPartition{Topic: "f", Partition: 0}, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "f-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, h := batch(1, "x", 1)
	if _, err := l.Append(b, h, t0); !errors.Is(err, os.ErrExist) {
		t.Fatalf("append: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "f-0")); len(ents) != 0 {
		t.Fatalf("foreign directory touched: %v", ents)
	}
	checkEmptyLog(t, l)
	if err := os.Remove(filepath.Join(dir, "f-0")); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, 1, "x", 1)
	if l.LogEndOffset() != 1 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	checkOnDisk(t, l)
}

// TestLazyDelete: deleting a lazy log leaves nothing on disk and schedules
// nothing; in the same batch a written log is renamed as before.
func TestLazyDelete(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	logs, err := m.CreateMany(lazyReqs(3, DefaultLogConfig()))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(kafka.TopicPartition{Topic: "lazy", Partition: 0}); err != nil {
		t.Fatal(err)
	}
	if d := subdirs(t, dir); len(d) != 0 || len(m.deletes) != 0 {
		t.Fatalf("directories %v, pending deletes %v", d, m.deletes)
	}
	mustAppend(t, logs[2], 1, "x", 1)
	if err := m.DeleteMany([]kafka.TopicPartition{{Topic: "lazy", Partition: 1}, {Topic: "lazy", Partition: 2}}); err != nil {
		t.Fatal(err)
	}
	d := subdirs(t, dir)
	if len(d) != 1 || !strings.HasPrefix(d[0], "lazy-2.") || !strings.HasSuffix(d[0], "-delete") || len(m.deletes) != 1 {
		t.Fatalf("directories %v, pending deletes %v", d, m.deletes)
	}
	if len(m.Partitions()) != 0 {
		t.Fatalf("partitions left: %v", m.Partitions())
	}
	b, h := batch(1, "x", 1)
	if _, err := logs[0].Append(b, h, t0); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("append to a deleted lazy log: %v", err)
	}
	if d := subdirs(t, dir); len(d) != 1 {
		t.Fatalf("a deleted lazy log was materialized: %v", d)
	}
}

// warnCounter is a slog handler counting warnings.
type warnCounter struct{ n atomic.Int64 }

func (w *warnCounter) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		w.n.Add(1)
	}
	return nil
}
func (w *warnCounter) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnCounter) WithGroup(string) slog.Handler      { return w }

// TestLazyRetention: retention, flush and checkpoint passes over lazy logs
// with the strictest retention warn of nothing and create nothing, while a
// written neighbour is still trimmed.
func TestLazyRetention(t *testing.T) {
	dir := t.TempDir()
	warns := &warnCounter{}
	m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, Logger: slog.New(warns), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := DefaultLogConfig()
	cfg.RetentionMs, cfg.RetentionBytes, cfg.FlushMs = 0, 0, 0
	logs, err := m.CreateMany(lazyReqs(1000, cfg))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, logs[0], t0.UnixMilli(), "old", 2)
	commitAll(logs[0])
	for range 2 {
		m.RunOnce(t0.Add(time.Hour))
	}
	if warns.n.Load() != 0 {
		t.Fatalf("%d warnings", warns.n.Load())
	}
	if d := subdirs(t, dir); !reflect.DeepEqual(d, []string{"lazy-0"}) {
		t.Fatalf("directories: %v", d[:min(len(d), 5)])
	}
	if lso := logs[0].LogStartOffset(); lso != 2 {
		t.Fatalf("written log not trimmed: log start %d", lso)
	}
	for _, l := range logs[1:] {
		if l.loaded.Load() || !l.lazy.Load() {
			t.Fatalf("%s loaded by a retention pass", l.tp)
		}
	}
}

// TestLazyConcurrentFirstAppends: several goroutines append to and read a
// lazy log at once; it is materialized once and keeps every record. Run
// with -race.
func TestLazyConcurrentFirstAppends(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l, err := m.Create(kafka.TopicPartition{Topic: "race", Partition: 0}, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range each {
				b, h := batch(int64(i), fmt.Sprint(w), 1)
				if _, err := l.Append(b, h, t0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range each {
				leo := l.LogEndOffset()
				if _, err := l.Read(leo, 1<<62, 1<<20, true); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := l.MaxTimestamp(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := len(readAll(t, l, 0)); got != writers*each {
		t.Fatalf("%d records", got)
	}
	if d := subdirs(t, dir); !reflect.DeepEqual(d, []string{"race-0"}) {
		t.Fatalf("directories: %v", d)
	}
}

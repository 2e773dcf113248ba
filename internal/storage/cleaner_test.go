package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCleanerCheckpointSurvivesRestart: a pass writes
// cleaner-offset-checkpoint (Kafka's format), read back at open; a log
// truncated below it has it lowered.
func TestCleanerCheckpointSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, compactConfig())
	now, mdl := t0, model{}
	randomWrites(t, l, rand.New(rand.NewPCG(1, 1)), &now, mdl, 100, 10)
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("s"), []byte("s")})
	cleanAll(t, m, now)
	l.mu.RLock()
	fd := l.firstDirty
	l.mu.RUnlock()
	if fd <= 0 {
		t.Fatalf("firstDirty %d after cleaning", fd)
	}
	data, err := os.ReadFile(filepath.Join(dir, cleanerCheckpointFile))
	if err != nil || !strings.HasPrefix(string(data), "0\n1\nt 0 ") {
		t.Fatalf("checkpoint %q: %v", data, err)
	}
	m.Close()
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	l.mu.RLock()
	got := l.firstDirty
	l.mu.RUnlock()
	if got != fd {
		t.Fatalf("firstDirty %d after restart, want %d", got, fd)
	}
	if err := l.TruncateTo(fd / 2); err != nil {
		t.Fatal(err)
	}
	l.mu.RLock()
	got = l.firstDirty
	l.mu.RUnlock()
	if got > l.LogEndOffset() {
		t.Fatalf("firstDirty %d above the log end %d after truncation", got, l.LogEndOffset())
	}
}

// TestCleanerAbortsOnTruncation: segments truncated while a pass wrote
// its cleaned files are not swapped; the files go, the log is intact.
func TestCleanerAbortsOnTruncation(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, compactConfig())
	now, mdl := t0, model{}
	randomWrites(t, l, rand.New(rand.NewPCG(2, 2)), &now, mdl, 100, 10)
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("s"), []byte("s")})
	c := m.newCleaner(m.CleanerConfig(), nil)
	job, err := l.prepareClean(now.UnixMilli())
	if err != nil || job == nil {
		t.Fatalf("nothing to clean: %v", err)
	}
	mapEnd, err := c.buildMap(job)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := c.writeGroups(job, mapEnd, now.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(job.stats[0].end + 1); err != nil {
		t.Fatal(err)
	}
	before := len(readAll(t, l, 0))
	if err := l.swapCleaned(job, groups, mapEnd, 0); !errors.Is(err, errCleanAborted) {
		t.Fatalf("swap after truncation: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(l.dir(), "*"+cleanedSuffix)); len(left) > 0 {
		t.Fatalf("cleaned files left: %v", left)
	}
	if n := len(readAll(t, l, 0)); n != before {
		t.Fatalf("%d records after an aborted swap, %d before", n, before)
	}
}

// TestCleanerThreads: Manager.Run's cleaner threads clean a due log
// within a few backoffs and stop with Run.
func TestCleanerThreads(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir()}, CleanerEnable: true, CleanerThreads: 2,
		CleanerBackoff: 5 * time.Millisecond, CleanerDedupeBufferSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, _ := m.Create(tp0, topic, compactConfig())
	now, mdl := time.Now(), model{}
	randomWrites(t, l, rand.New(rand.NewPCG(3, 3)), &now, mdl, 100, 10)
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("s"), []byte("s")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	for deadline := time.Now().Add(30 * time.Second); len(readAll(t, l, 0)) > len(mdl); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not cleaned: %d records for %d keys", len(readAll(t, l, 0)), len(mdl))
		}
	}
	cancel()
	<-done
	checkCompacted(t, l, mdl, false)
}

// TestCleanerPauseAbortsPass: a pass that finds cleaning paused while it
// writes gives up and leaves no .cleaned file.
func TestCleanerPauseAbortsPass(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, compactConfig())
	now, mdl := t0, model{}
	randomWrites(t, l, rand.New(rand.NewPCG(4, 4)), &now, mdl, 100, 10)
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("s"), []byte("s")})
	c := m.newCleaner(m.CleanerConfig(), nil)
	job, err := l.prepareClean(now.UnixMilli())
	if err != nil || job == nil {
		t.Fatalf("nothing to clean: %v", err)
	}
	mapEnd, err := c.buildMap(job)
	if err != nil {
		t.Fatal(err)
	}
	l.cleanPauses.Add(1) // as pauseCleaning, without waiting for the pass
	defer l.cleanPauses.Add(-1)
	if _, err := c.writeGroups(job, mapEnd, now.UnixMilli()); !errors.Is(err, errCleanAborted) {
		t.Fatalf("paused pass: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(l.dir(), "*"+cleanedSuffix)); len(left) > 0 {
		t.Fatalf("cleaned files left: %v", left)
	}
}

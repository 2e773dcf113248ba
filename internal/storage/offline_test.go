package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// twoDirManager opens a manager on two log dirs recording its dir failures.
func twoDirManager(t *testing.T) (m *Manager, dirs []string, failures *[]DirFailure) {
	t.Helper()
	dirs = []string{t.TempDir(), t.TempDir()}
	failures = new([]DirFailure)
	m, err := OpenManager(ManagerConfig{Dirs: dirs, FileDeleteDelay: time.Minute, Now: func() time.Time { return t0 },
		OnDirFailure: func(f DirFailure) { *failures = append(*failures, f) }})
	if err != nil {
		t.Fatal(err)
	}
	return m, dirs, failures
}

// fillDisk makes the active segment of l write to /dev/full, so that its
// next append gets the kernel's ENOSPC, as on a full file system.
func fillDisk(t *testing.T, l *Log) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	s := l.active()
	if err := s.acquire(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.f.Close()
	s.f = full
	s.mu.Unlock()
	s.release()
}

// An append failing with ENOSPC takes its log dir offline, once: every log
// there refuses reads and writes with ErrKafkaStorage, the other dir goes
// on, new logs go there, and Close leaves the failed dir unmarked.
func TestAppendENOSPCTakesDirOffline(t *testing.T) {
	m, dirs, failures := twoDirManager(t)
	a, err := m.Create(kafka.TopicPartition{Topic: "a", Partition: 0}, topic, LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(kafka.TopicPartition{Topic: "b", Partition: 0}, topic, LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if a.LogDir() != dirs[0] || b.LogDir() != dirs[1] {
		t.Fatalf("logs in %s and %s, want one in each dir", a.LogDir(), b.LogDir())
	}
	mustAppend(t, a, t0.UnixMilli(), "a", 2)
	mustAppend(t, b, t0.UnixMilli(), "b", 2)
	fillDisk(t, a)

	rec, hdrs := batch(t0.UnixMilli(), "full", 1)
	_, err = a.Append(rec, hdrs, t0)
	if !errors.Is(err, ErrKafkaStorage) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v, want ErrKafkaStorage wrapping ENOSPC", err)
	}
	if len(*failures) != 1 || (*failures)[0].Dir != dirs[0] || !slices.Equal((*failures)[0].Online, dirs[1:]) {
		t.Fatalf("failures reported: %+v, want one of %s with %s online", *failures, dirs[0], dirs[1])
	}
	if _, err := a.Read(0, 1<<62, 1<<20, true); !errors.Is(err, ErrKafkaStorage) {
		t.Fatalf("read in the offline dir: %v", err)
	}
	if _, err := a.AppendAsFollower(rec, hdrs); !errors.Is(err, ErrKafkaStorage) {
		t.Fatalf("follower append in the offline dir: %v", err)
	}
	if err := a.TruncateTo(0); !errors.Is(err, ErrKafkaStorage) {
		t.Fatalf("truncate in the offline dir: %v", err)
	}
	if len(*failures) != 1 {
		t.Fatalf("dir failure reported %d times", len(*failures))
	}

	mustAppend(t, b, t0.UnixMilli(), "b2", 1)
	if got := values(readAll(t, b, 0)); len(got) != 3 {
		t.Fatalf("log in the online dir reads %v", got)
	}
	c, err := m.Create(kafka.TopicPartition{Topic: "c", Partition: 0}, topic, LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.LogDir() != dirs[1] {
		t.Fatalf("new log placed in %s, the offline dir", c.LogDir())
	}
	for _, d := range m.DescribeDirs() {
		if d.Offline != (d.Path == dirs[0]) {
			t.Fatalf("DescribeDirs: %s offline=%v", d.Path, d.Offline)
		}
	}
	if got := m.OnlineDirs(); !slices.Equal(got, dirs[1:]) {
		t.Fatalf("online dirs %v", got)
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true} {
		_, err := os.Stat(filepath.Join(dirs[i], cleanShutdownFile))
		if got := err == nil; got != want {
			t.Errorf("clean-shutdown marker in dir %d: %v, want %v", i, got, want)
		}
	}
}

// A checkpoint that cannot be written takes its dir offline; with every
// dir offline the report lists none online.
func TestCheckpointFailureTakesDirOffline(t *testing.T) {
	dir := t.TempDir()
	var failures []DirFailure
	m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, Now: func() time.Time { return t0 },
		OnDirFailure: func(f DirFailure) { failures = append(failures, f) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, err := m.Create(tp0, topic, LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, t0.UnixMilli(), "x", 3)
	commitAll(l)
	// The temp file of the checkpoint cannot be opened for writing.
	if err := os.Mkdir(filepath.Join(dir, hwCheckpointFile+".tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.checkpointHW(true); !errors.Is(err, ErrKafkaStorage) {
		t.Fatalf("checkpoint: %v, want ErrKafkaStorage", err)
	}
	if len(failures) != 1 || failures[0].Dir != dir || len(failures[0].Online) != 0 {
		t.Fatalf("failures reported: %+v", failures)
	}
	if _, err := l.Read(0, 1<<62, 1<<20, true); !errors.Is(err, ErrKafkaStorage) {
		t.Fatalf("read in the offline dir: %v", err)
	}
	if err := m.checkpointHW(true); err != nil {
		t.Fatalf("checkpoint of an offline dir is tried again: %v", err)
	}
}

// Refusals by the log's rules leave the dir online.
func TestValidationErrorsKeepDirOnline(t *testing.T) {
	m, _, failures := twoDirManager(t)
	defer m.Close()
	l, err := m.Create(tp0, topic, LogConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, t0.UnixMilli(), "x", 3)
	rec, hdrs := batch(t0.UnixMilli(), "old", 1) // base offset 0, below the end
	if _, err := l.AppendAsFollower(rec, hdrs); !errors.Is(err, ErrOffsetOutOfOrder) {
		t.Fatalf("follower append below the end: %v", err)
	}
	if _, err := l.AppendAsLeader(rec, hdrs, t0, -1); err == nil {
		t.Fatal("negative leader epoch accepted")
	}
	if err := l.TruncateFullyAndStartAt(-1); err == nil {
		t.Fatal("negative truncation accepted")
	}
	if len(*failures) != 0 || len(m.OnlineDirs()) != 2 {
		t.Fatalf("dir failures %+v after refusals", *failures)
	}
	mustAppend(t, l, t0.UnixMilli(), "y", 1)
}

package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// idem builds a batch of n records of producer pid at epoch and base
// sequence seq.
func idem(pid int64, epoch int16, seq int32, tag string, n int) ([]byte, []record.Header) {
	b, _ := batch(t0.UnixMilli(), tag, n)
	recordtest.Idempotent(b, pid, epoch, seq)
	h, err := record.Validate(b, 1<<30)
	if err != nil {
		panic(err)
	}
	return b, h
}

func appendIdem(t *testing.T, l *Log, pid int64, epoch int16, seq int32, tag string, n int) (AppendInfo, error) {
	t.Helper()
	b, h := idem(pid, epoch, seq, tag, n)
	return l.Append(b, h, t0)
}

func mustIdem(t *testing.T, l *Log, pid int64, epoch int16, seq int32, tag string, n int) AppendInfo {
	t.Helper()
	info, err := appendIdem(t, l, pid, epoch, seq, tag, n)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// wantDuplicate retries a batch and checks it is answered with the
// original's offsets and appends nothing.
func wantDuplicate(t *testing.T, l *Log, pid int64, epoch int16, seq int32, n int, first int64) {
	t.Helper()
	leo := l.LogEndOffset()
	info, err := appendIdem(t, l, pid, epoch, seq, "retry", n)
	if err != nil {
		t.Fatalf("retry of seq %d: %v", seq, err)
	}
	if !info.Duplicate || info.FirstOffset != first || info.LastOffset != first+int64(n)-1 {
		t.Fatalf("retry of seq %d: %+v, want a duplicate at %d", seq, info, first)
	}
	if l.LogEndOffset() != leo {
		t.Fatalf("retry appended: LEO %d -> %d", leo, l.LogEndOffset())
	}
}

func snapshotFiles(t *testing.T, dir string) []int64 {
	t.Helper()
	_, snaps, err := listDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return snaps
}

func TestIdempotentDuplicateAppendsNothing(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	first := mustIdem(t, l, 1, 0, 0, "a", 3)
	mustIdem(t, l, 1, 0, 3, "b", 2)
	wantDuplicate(t, l, 1, 0, 0, 3, first.FirstOffset)
	if got := values(readAll(t, l, 0)); !slices.Equal(got, []string{"0:a-0", "1:a-1", "2:a-2", "3:b-0", "4:b-1"}) {
		t.Fatalf("log = %v, want each batch once", got)
	}
	for _, c := range []struct {
		name  string
		epoch int16
		seq   int32
		err   error
	}{{"gap", 0, 9, ErrOutOfOrderSequence}, {"old epoch", -1, 5, ErrInvalidProducerBatch}} {
		if _, err := appendIdem(t, l, 1, c.epoch, c.seq, "x", 1); !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
	}
	if l.LogEndOffset() != 5 {
		t.Fatalf("refused batches appended: LEO %d", l.LogEndOffset())
	}
	mustIdem(t, l, 1, 1, 0, "c", 1) // a new epoch
	if _, err := appendIdem(t, l, 1, 0, 5, "x", 1); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("fenced epoch: err = %v", err)
	}
}

func TestNonIdempotentBypassesProducerState(t *testing.T) {
	m := openManager(t, t.TempDir())
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustAppend(t, l, t0.UnixMilli(), "a", 1)
	if info := mustAppend(t, l, t0.UnixMilli(), "a", 1); info.Duplicate || l.LogEndOffset() != 2 {
		t.Fatalf("second plain batch: %+v, LEO %d", info, l.LogEndOffset())
	}
	if l.producers != nil {
		t.Fatal("plain batches made producer state")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if s := snapshotFiles(t, filepath.Join(m.cfg.Dirs[0], "t-0")); len(s) != 0 {
		t.Fatalf("snapshots %v for a log without producers", s)
	}
}

func TestFollowerBuildsProducerState(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	leader, _ := m.Create(tp0, topic, DefaultLogConfig())
	follower, _ := m.Create(kafka.TopicPartition{Topic: "f", Partition: 0}, topic, DefaultLogConfig())
	mustIdem(t, leader, 4, 2, 0, "a", 2)
	mustIdem(t, leader, 4, 2, 2, "b", 2)
	res, err := leader.Read(0, 1<<62, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	hdrs, err := record.Validate(res.Records, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := follower.AppendAsFollower(res.Records, hdrs); err != nil {
		t.Fatal(err)
	}
	// The follower becomes leader and gets a retry sent to the old one.
	wantDuplicate(t, follower, 4, 2, 2, 2, 2)
	wantDuplicate(t, follower, 4, 2, 0, 2, 0)
}

func TestProducerStateSurvivesCleanRestart(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	for i := range int32(7) {
		mustIdem(t, l, 9, 0, i*2, "a", 2)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if s := snapshotFiles(t, filepath.Join(dir, "t-0")); !slices.Equal(s, []int64{14}) {
		t.Fatalf("snapshots after close = %v, want [14]", s)
	}
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	wantDuplicate(t, l, 9, 0, 12, 2, 12)
	wantDuplicate(t, l, 9, 0, 4, 2, 4) // the oldest of the last five
	mustIdem(t, l, 9, 0, 14, "b", 1)
}

func TestProducerStateSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 300 // a roll every few batches
	l, _ := m.Create(tp0, topic, cfg)
	for i := range int32(12) {
		mustIdem(t, l, 9, 0, i, "a", 1)
	}
	if len(l.segs) < 3 {
		t.Fatalf("%d segments, want rolls", len(l.segs))
	}
	snaps := snapshotFiles(t, filepath.Join(dir, "t-0"))
	if len(snaps) != snapshotsKept || snaps[1] != l.active().base {
		t.Fatalf("snapshots %v, want the last %d, the newest at %d", snaps, snapshotsKept, l.active().base)
	}
	m.crash()
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	l.SetConfig(cfg)
	for seq := int32(7); seq < 12; seq++ {
		wantDuplicate(t, l, 9, 0, seq, 1, int64(seq))
	}
	mustIdem(t, l, 9, 0, 12, "b", 1)
}

func TestCorruptSnapshotIsIgnored(t *testing.T) {
	cases := map[string]func(path string) error{
		"torn":    func(p string) error { return os.Truncate(p, 15) },
		"garbage": func(p string) error { return os.WriteFile(p, []byte("not a snapshot at all, really"), 0o644) },
		"empty":   func(p string) error { return os.WriteFile(p, nil, 0o644) },
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			m := openManager(t, dir)
			l, _ := m.Create(tp0, topic, DefaultLogConfig())
			for i := range int32(3) {
				mustIdem(t, l, 9, 0, i, "a", 1)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if err := corrupt(snapshotPath(filepath.Join(dir, "t-0"), 3)); err != nil {
				t.Fatal(err)
			}
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			wantDuplicate(t, l, 9, 0, 2, 1, 2) // rebuilt from the log
			if s := snapshotFiles(t, filepath.Join(dir, "t-0")); len(s) != 0 {
				t.Fatalf("corrupt snapshot kept: %v", s)
			}
		})
	}
}

func TestTruncationReloadsProducerState(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 300
	l, _ := m.Create(tp0, topic, cfg)
	for i := range int32(12) {
		mustIdem(t, l, 9, 0, i, "a", 1)
	}
	if err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	for _, s := range snapshotFiles(t, filepath.Join(dir, "t-0")) {
		if s > 4 {
			t.Fatalf("snapshot %d above the truncation point kept", s)
		}
	}
	// Sequences 4.. are gone with their batches: 4 is the next, not a retry.
	if info := mustIdem(t, l, 9, 0, 4, "b", 1); info.Duplicate || info.FirstOffset != 4 {
		t.Fatalf("after truncation: %+v", info)
	}
	wantDuplicate(t, l, 9, 0, 3, 1, 3)
	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if l.producers != nil || len(snapshotFiles(t, filepath.Join(dir, "t-0"))) != 0 {
		t.Fatal("producer state or snapshots left after a full truncation")
	}
	if info := mustIdem(t, l, 9, 0, 8, "c", 1); info.FirstOffset != 100 {
		t.Fatalf("unknown producer after full truncation: %+v", info)
	}
}

func TestRetentionDeletesOldSnapshotsKeepsProducers(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 300
	cfg.RetentionBytes = 1
	l, _ := m.Create(tp0, topic, cfg)
	for i := range int32(12) {
		mustIdem(t, l, 9, 0, i, "a", 1)
	}
	commitAll(l)
	m.RunOnce(t0)
	start := l.LogStartOffset()
	if start == 0 {
		t.Fatal("retention deleted nothing")
	}
	for _, s := range snapshotFiles(t, filepath.Join(dir, "t-0")) {
		if s < start {
			t.Fatalf("snapshot %d below the log start %d kept", s, start)
		}
	}
	wantDuplicate(t, l, 9, 0, 11, 1, 11)
}

func TestExpireProducers(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, ProducerIDExpiration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustIdem(t, l, 9, 0, 0, "a", 1) // max timestamp t0
	m.ExpireProducers(t0.Add(999 * time.Millisecond))
	wantDuplicate(t, l, 9, 0, 0, 1, 0)
	m.ExpireProducers(t0.Add(time.Second))
	if ps, _ := l.ActiveProducers(); len(ps) != 0 {
		t.Fatalf("producers after expiration: %+v", ps)
	}
	// Forgotten: its retry is a new batch now (KIP-360 accepts any sequence).
	if info := mustIdem(t, l, 9, 0, 0, "a", 1); info.Duplicate {
		t.Fatal("expired producer still deduplicated")
	}
}

func TestActiveProducers(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	if ps, err := l.ActiveProducers(); err != nil || ps != nil {
		t.Fatalf("lazy log: %v, %v", ps, err)
	}
	mustIdem(t, l, 9, 3, 0, "a", 2)
	mustIdem(t, l, 2, 0, 0, "a", 1)
	ps, err := l.ActiveProducers()
	want := []ProducerInfo{{2, 0, 0, t0.UnixMilli(), -1, -1}, {9, 3, 1, t0.UnixMilli() + 1, -1, -1}}
	if err != nil || !slices.Equal(ps, want) {
		t.Fatalf("ActiveProducers = %+v, %v; want %+v", ps, err, want)
	}
}

func TestProducerStateSurvivesCrashWithoutSnapshot(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	for i := range int32(3) {
		mustIdem(t, l, 9, 0, i, "a", 1)
	}
	m.crash()
	if s := snapshotFiles(t, filepath.Join(dir, "t-0")); len(s) != 0 {
		t.Fatalf("snapshots %v before any roll or close", s)
	}
	m = openManager(t, dir)
	defer m.Close()
	wantDuplicate(t, m.Get(tp0), 9, 0, 2, 1, 2) // replayed from the whole log
}

// An append of several batches checks each against the ones before it;
// one bad batch refuses the whole append.
func TestIdempotentMultiBatchAppend(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	two := func(seq1, seq2 int32) ([]byte, []record.Header) {
		b1, _ := idem(3, 0, seq1, "a", 2)
		b2, _ := idem(3, 0, seq2, "b", 1)
		all := append(append([]byte(nil), b1...), b2...)
		h, err := record.Validate(all, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		return all, h
	}
	for _, c := range []struct {
		name       string
		seq1, seq2 int32
		err        error
	}{
		{"second batch out of order", 0, 3, ErrOutOfOrderSequence},
		{"second batch repeats the first", 0, 0, ErrOutOfOrderSequence},
		{"in sequence", 0, 2, nil},
		{"retry of both", 0, 2, ErrOutOfOrderSequence},
	} {
		leo := l.LogEndOffset()
		b, h := two(c.seq1, c.seq2)
		_, err := l.Append(b, h, t0)
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Fatalf("%s: err = %v, want %v", c.name, err, c.err)
		}
		if grew := l.LogEndOffset() != leo; grew != (c.err == nil) {
			t.Fatalf("%s: LEO %d -> %d", c.name, leo, l.LogEndOffset())
		}
	}
	wantDuplicate(t, l, 3, 0, 2, 1, 2)
}

// A restart does not bring back producers idle past
// producer.id.expiration.ms.
func TestExpiredProducersAreNotLoaded(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir) // the clock is t0
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	b, _ := batch(t0.Add(-25*time.Hour).UnixMilli(), "old", 1) // idle for longer than the default 24h
	h, err := record.Validate(recordtest.Idempotent(b, 9, 0, 0), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(b, h, t0); err != nil {
		t.Fatal(err)
	}
	mustIdem(t, l, 5, 0, 0, "new", 1)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openManager(t, dir)
	defer m.Close()
	ps, err := m.Get(tp0).ActiveProducers()
	if err != nil || len(ps) != 1 || ps[0].ProducerID != 5 {
		t.Fatalf("producers after restart: %+v, %v; want 5 alone", ps, err)
	}
}

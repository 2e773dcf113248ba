package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
)

// txnBatch builds a transactional batch of n records of producer pid.
func txnBatch(pid int64, epoch int16, seq int32, tag string, n int) ([]byte, []record.Header) {
	b, _ := idem(pid, epoch, seq, tag, n)
	b[22] |= 0x10 // attributes, low byte: transactional
	record.SetCRC(b)
	h, err := record.Validate(b, 1<<30)
	if err != nil {
		panic(err)
	}
	return b, h
}

func mustTxn(t *testing.T, l *Log, pid int64, seq int32, n int) AppendInfo {
	t.Helper()
	b, h := txnBatch(pid, 0, seq, "x", n)
	info, err := l.Append(b, h, t0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func mustMarker(t *testing.T, l *Log, pid int64, commit bool) AppendInfo {
	t.Helper()
	info, err := l.AppendTxnMarker(record.Marker{ProducerID: pid, CoordinatorEpoch: 1, Commit: commit}, t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func wantAborted(t *testing.T, l *Log, from, to int64, want ...AbortedTxn) {
	t.Helper()
	if got := l.AbortedTxns(from, to); !slices.Equal(got, want) {
		t.Fatalf("aborted in [%d, %d): %+v, want %+v", from, to, got, want)
	}
}

func txnFileEntries(t *testing.T, dir string, base int64) []abortedTxn {
	t.Helper()
	got, err := readTxnIndex(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTxnMarkerAppendAsLeader(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustTxn(t, l, 1, 0, 3) // 0..2
	mustAppend(t, l, 0, "plain", 1)
	mustTxn(t, l, 2, 0, 1) // 4
	commitAll(l)
	if !l.HasOpenTxn(1) || !l.HasOpenTxn(2) || l.HasOpenTxn(3) {
		t.Fatal("open transactions not tracked")
	}
	if lso := l.LastStableOffset(); lso != 0 {
		t.Fatalf("LSO %d, want 0 (producer 1 open)", lso)
	}
	info := mustMarker(t, l, 1, false) // abort at 5
	if info.FirstOffset != 5 || info.LastOffset != 5 || l.HasOpenTxn(1) {
		t.Fatalf("marker %+v", info)
	}
	if lso := l.LastStableOffset(); lso != 0 {
		t.Fatalf("LSO %d before the hw passes the marker, want 0", lso)
	}
	commitAll(l)
	if lso := l.LastStableOffset(); lso != 4 {
		t.Fatalf("LSO %d, want 4 (producer 2 open)", lso)
	}
	wantAborted(t, l, 0, 100, AbortedTxn{ProducerID: 1, FirstOffset: 0})
	if got := txnFileEntries(t, filepath.Join(dir, "t-0"), 0); len(got) != 1 ||
		got[0] != (abortedTxn{producerID: 1, firstOffset: 0, lastOffset: 5, lastStableOffset: 4}) {
		t.Fatalf(".txnindex %+v", got)
	}
	mustMarker(t, l, 2, true) // commit at 6
	commitAll(l)
	if lso := l.LastStableOffset(); lso != 7 {
		t.Fatalf("LSO %d, want the hw 7", lso)
	}
	// The marker is in the log, as Kafka writes it.
	res, err := l.Read(5, 6, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	if mk, ok, err := record.ParseMarker(res.Records); err != nil || !ok || mk.Commit || mk.ProducerID != 1 || mk.CoordinatorEpoch != 1 {
		t.Fatalf("marker read back: %+v %v %v", mk, ok, err)
	}
	// The marker rules, nothing appended on a refusal.
	leo := l.LogEndOffset()
	if _, err := l.AppendTxnMarker(record.Marker{ProducerID: 1, CoordinatorEpoch: 0}, t0, 0); !errors.Is(err, ErrCoordinatorFenced) {
		t.Fatalf("older coordinator epoch: %v", err)
	}
	mustIdem(t, l, 3, 2, 0, "e", 1)
	if _, err := l.AppendTxnMarker(record.Marker{ProducerID: 3, ProducerEpoch: 1}, t0, 0); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("older producer epoch: %v", err)
	}
	if l.LogEndOffset() != leo+1 {
		t.Fatalf("LEO %d, want %d: a refused marker was written", l.LogEndOffset(), leo+1)
	}
}

func TestClientControlBatchRefused(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	b := record.BuildMarker(record.Marker{ProducerID: 1}, t0.UnixMilli())
	h, err := record.Validate(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(b, h, t0, 0); !errors.Is(err, record.ErrInvalidRecord) {
		t.Fatalf("control batch from a client: %v, want invalid record", err)
	}
	tb, th := txnBatch(1, 0, 0, "x", 1)
	record.SetBaseOffset(tb, 0)
	tb[43], th[0].ProducerID = 0xff, -1 // producer id -1: bytes 43..50
	for i := 44; i < 51; i++ {
		tb[i] = 0xff
	}
	record.SetCRC(tb)
	if _, err := l.Append(tb, th, t0); !errors.Is(err, record.ErrInvalidRecord) {
		t.Fatalf("transactional batch without producer id: %v", err)
	}
	if l.LogEndOffset() != 0 {
		t.Fatal("a refused batch was written")
	}
}

func TestTxnMarkerAsFollower(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	b, h := txnBatch(5, 0, 0, "x", 2)
	record.SetBaseOffset(b, 0)
	h[0].BaseOffset = 0
	if _, err := l.AppendAsFollower(b, h); err != nil {
		t.Fatal(err)
	}
	mk := record.BuildMarker(record.Marker{ProducerID: 5, CoordinatorEpoch: 3}, t0.UnixMilli())
	record.SetBaseOffset(mk, 2)
	mh, _ := record.Validate(mk, 1<<20)
	if _, err := l.AppendAsFollower(mk, mh); err != nil {
		t.Fatal(err)
	}
	commitAll(l)
	wantAborted(t, l, 0, 3, AbortedTxn{ProducerID: 5, FirstOffset: 0})
	if l.HasOpenTxn(5) || l.LastStableOffset() != 3 {
		t.Fatalf("after the replicated abort: open %v, LSO %d", l.HasOpenTxn(5), l.LastStableOffset())
	}
}

// txnScenario writes, on a log rolling every two batches: producer 1
// aborted (0..1, marker 2), producer 2 open from 3, producer 3 aborted
// (4, marker 5), and returns the log's directory.
func txnScenario(t *testing.T, m *Manager, cfg LogConfig) *Log {
	t.Helper()
	l, _ := m.Create(tp0, topic, cfg)
	mustTxn(t, l, 1, 0, 2)
	mustMarker(t, l, 1, false)
	mustTxn(t, l, 2, 0, 1)
	mustTxn(t, l, 3, 0, 1)
	mustMarker(t, l, 3, false)
	commitAll(l)
	return l
}

func wantScenario(t *testing.T, l *Log) {
	t.Helper()
	wantAborted(t, l, 0, 100, AbortedTxn{ProducerID: 1, FirstOffset: 0}, AbortedTxn{ProducerID: 3, FirstOffset: 4})
	if !l.HasOpenTxn(2) || l.HasOpenTxn(1) || l.LastStableOffset() != 3 {
		t.Fatalf("open %v %v, LSO %d; want producer 2 open from 3", l.HasOpenTxn(1), l.HasOpenTxn(2), l.LastStableOffset())
	}
}

func TestTxnIndexAcrossRestarts(t *testing.T) {
	cfg := DefaultLogConfig()
	b, _ := txnBatch(1, 0, 0, "x", 1)
	cfg.SegmentBytes = int64(2*len(b) + 10)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, pdir string, l *Log)
		crash  bool
	}{
		{"clean", nil, false},
		{"crash", nil, true},
		{"crash, index entry lost", func(t *testing.T, pdir string, l *Log) {
			os.Remove(txnIndexPath(pdir, l.aborted[1].file))
		}, true},
		{"corrupt index file", func(t *testing.T, pdir string, l *Log) {
			f, _ := os.OpenFile(txnIndexPath(pdir, l.aborted[0].file), os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte{1, 2, 3})
			f.Close()
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pdir := filepath.Join(dir, "t-0")
			m := openManager(t, dir)
			l := txnScenario(t, m, cfg)
			if len(l.segs) < 2 {
				t.Fatalf("%d segments, want rolls", len(l.segs))
			}
			wantScenario(t, l)
			files := slices.Clone(l.txnFiles)
			if c.crash {
				l.Flush(t0)
				m.crash()
			} else if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if c.damage != nil {
				c.damage(t, pdir, l)
			}
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			l.SetConfig(cfg)
			commitAll(l) // a crash loses the high watermark checkpoint
			wantScenario(t, l)
			if !slices.Equal(l.txnFiles, files) {
				t.Fatalf("index files %v, want %v", l.txnFiles, files)
			}
			for _, f := range files {
				if _, err := readTxnIndex(pdir, f); err != nil {
					t.Fatalf("file %d: %v", f, err)
				}
			}
		})
	}
}

func TestTxnIndexTruncation(t *testing.T) {
	cfg := DefaultLogConfig()
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l := txnScenario(t, m, cfg)
	if err := l.TruncateTo(5); err != nil { // producer 3's abort marker goes
		t.Fatal(err)
	}
	wantAborted(t, l, 0, 100, AbortedTxn{ProducerID: 1, FirstOffset: 0})
	if !l.HasOpenTxn(3) {
		t.Fatal("producer 3's transaction is open again without its marker")
	}
	if got := txnFileEntries(t, filepath.Join(dir, "t-0"), 0); len(got) != 1 || got[0].producerID != 1 {
		t.Fatalf(".txnindex after truncation: %+v", got)
	}
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	wantAborted(t, l, 0, 100)
	if _, err := os.Stat(txnIndexPath(filepath.Join(dir, "t-0"), 0)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty .txnindex kept: %v", err)
	}
	mustMarker(t, l, 1, false)
	wantAborted(t, l, 0, 100, AbortedTxn{ProducerID: 1, FirstOffset: 0})
	if err := l.TruncateFullyAndStartAt(10); err != nil {
		t.Fatal(err)
	}
	wantAborted(t, l, 0, 100)
	if l.HasOpenTxn(1) || len(l.txnFiles) != 0 {
		t.Fatalf("after a full truncation: files %v", l.txnFiles)
	}
}

func TestTxnIndexRetention(t *testing.T) {
	cfg := DefaultLogConfig()
	b, _ := txnBatch(1, 0, 0, "x", 1)
	cfg.SegmentBytes = int64(2*len(b) + 10)
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l := txnScenario(t, m, cfg)
	mustAppend(t, l, t0.UnixMilli(), "tail", 1)
	commitAll(l)
	first := l.aborted[0].file
	cfg.RetentionBytes = 1 // keep the least
	l.SetConfig(cfg)
	if _, err := l.enforceRetention(t0); err != nil {
		t.Fatal(err)
	}
	start := l.LogStartOffset()
	if start <= 2 {
		t.Fatalf("log start %d: retention deleted nothing", start)
	}
	for _, a := range l.aborted {
		if a.lastOffset < start {
			t.Fatalf("entry %+v below the log start %d kept", a, start)
		}
	}
	if _, err := os.Stat(txnIndexPath(filepath.Join(dir, "t-0"), first)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".txnindex of a deleted segment kept: %v", err)
	}
	if lso := l.LastStableOffset(); lso < start {
		t.Fatalf("LSO %d below the log start %d", lso, start)
	}
}

// KIP-890 part 1: a batch opening a transaction needs the producer's
// current verification guard, which a marker in between drops.
func TestTxnVerificationGuard(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	appendGuarded := func(pid int64, seq int32, g uint64) error {
		b, h := txnBatch(pid, 0, seq, "x", 1)
		_, err := l.AppendVerified(b, h, t0, 0, g)
		return err
	}
	g := l.StartTxnVerification(1)
	if g == 0 {
		t.Fatal("no guard for a producer without a transaction")
	}
	if err := appendGuarded(1, 0, g); err != nil || !l.HasOpenTxn(1) {
		t.Fatalf("verified batch: %v", err)
	}
	if g := l.StartTxnVerification(1); g != 0 {
		t.Fatalf("guard %d for a producer whose transaction is open", g)
	}
	if err := appendGuarded(1, 1, 0); err != nil {
		t.Fatalf("batch of an open transaction: %v", err)
	}

	// The transaction ends (a marker) between the verification and the
	// late batch: refused, nothing appended.
	g2 := l.StartTxnVerification(2)
	if _, err := l.AppendTxnMarker(record.Marker{ProducerID: 2}, t0, 0); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	if err := appendGuarded(2, 0, g2); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("batch verified before a marker: %v", err)
	}
	// Only the newest guard counts; an unverified batch has none.
	g3 := l.StartTxnVerification(3)
	g4 := l.StartTxnVerification(3)
	if err := appendGuarded(3, 0, g3); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("older guard: %v", err)
	}
	if err := appendGuarded(4, 0, 0); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("no guard: %v", err)
	}
	if l.LogEndOffset() != leo {
		t.Fatalf("refused batches written: LEO %d, want %d", l.LogEndOffset(), leo)
	}
	if err := appendGuarded(3, 0, g4); err != nil {
		t.Fatalf("newest guard: %v", err)
	}
	if b, h := idem(5, 0, 0, "plain", 1); true {
		if _, err := l.AppendVerified(b, h, t0, 0, 0); err != nil {
			t.Fatalf("non-transactional batch: %v", err)
		}
	}
}

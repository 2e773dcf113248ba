package storage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
)

// epochBatch builds one batch of n records at base in leader epoch epoch,
// as a follower receives it.
func epochBatch(base int64, epoch int32, tag string, n int) ([]byte, []record.Header) {
	b, h := batch(base, tag, n)
	record.SetBaseOffset(b, base)
	record.SetPartitionLeaderEpoch(b, epoch)
	h[0].BaseOffset, h[0].PartitionLeaderEpoch = base, epoch
	return b, h
}

func epochFile(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "t-0", epochCheckpointFile))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

func checkEpochs(t *testing.T, l *Log, latest int32, ends map[int32][2]int64) {
	t.Helper()
	if e, ok := l.LatestEpoch(); !ok || e != latest {
		t.Fatalf("LatestEpoch = %d, %v; want %d", e, ok, latest)
	}
	for req, want := range ends {
		if e, o := l.EndOffsetForEpoch(req); int64(e) != want[0] || o != want[1] {
			t.Fatalf("EndOffsetForEpoch(%d) = (%d, %d), want %v", req, e, o, want)
		}
	}
}

// TestAppendAsLeaderStampsEpoch: the epoch lands in every stored batch
// header (CRC still valid), new epochs are recorded at their first offset,
// Append keeps the latest epoch, and the checkpoint file carries it all
// across a clean and an unclean restart.
func TestAppendAsLeaderStampsEpoch(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	b, h := batch(0, "a", 3)
	b2, h2 := batch(0, "b", 2)
	two := append(b, b2...)
	hs := append(h, h2...)
	if _, err := l.AppendAsLeader(two, hs, t0, 3); err != nil {
		t.Fatal(err)
	}
	if hs[0].PartitionLeaderEpoch != 3 || hs[1].PartitionLeaderEpoch != 3 {
		t.Fatalf("headers not stamped: %+v", hs)
	}
	if info, err := l.AppendAsLeader(batchBytes(0, "c", 4), nil, t0, 5); err == nil {
		t.Fatalf("append with no headers: %+v", info)
	}
	c, hc := batch(0, "c", 4)
	if info, err := l.AppendAsLeader(c, hc, t0, 5); err != nil || info.FirstOffset != 5 {
		t.Fatalf("%+v %v", info, err)
	}
	d, hd := batch(0, "d", 1)
	if _, err := l.Append(d, hd, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(d, hd, t0, -1); err == nil {
		t.Fatal("negative epoch accepted")
	}
	want := map[int32][2]int64{3: {3, 5}, 4: {3, 5}, 5: {5, 10}, 2: {2, 0}, 6: {-1, -1}}
	checkEpochs(t, l, 5, want)
	if got := epochFile(t, dir); got != "0\n2\n3 0\n5 5\n" {
		t.Fatalf("checkpoint %q", got)
	}
	stored := func(l *Log) []int32 {
		res, err := l.Read(0, 1<<62, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := record.Validate(res.Records, 1<<30); err != nil {
			t.Fatalf("stored batches invalid: %v", err)
		}
		var out []int32
		for p := 0; p < len(res.Records); {
			out = append(out, int32(binary.BigEndian.Uint32(res.Records[p+12:])))
			h, _ := record.ReadHeader(res.Records[p:])
			p += h.Size()
		}
		return out
	}
	if got := stored(l); len(got) != 4 || got[0] != 3 || got[1] != 3 || got[2] != 5 || got[3] != 5 {
		t.Fatalf("stored epochs %v", got)
	}
	m.Close()
	m = openManager(t, dir)
	l = m.Get(tp0)
	checkEpochs(t, l, 5, want)
	m.crash()
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	checkEpochs(t, l, 5, want)
	if got := stored(l); len(got) != 4 || got[3] != 5 {
		t.Fatalf("stored epochs after restart %v", got)
	}
}

func batchBytes(ts int64, tag string, n int) []byte { b, _ := batch(ts, tag, n); return b }

// TestAppendAsFollowerRecordsEpochs: each newer PartitionLeaderEpoch in
// the copied batches starts an epoch at its batch; older ones do not.
func TestAppendAsFollowerRecordsEpochs(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	var recs []byte
	var hdrs []record.Header
	for _, x := range []struct {
		base  int64
		epoch int32
	}{{0, 1}, {2, 1}, {4, 2}} {
		b, h := epochBatch(x.base, x.epoch, "f", 2)
		recs, hdrs = append(recs, b...), append(hdrs, h...)
	}
	if _, err := l.AppendAsFollower(recs, hdrs); err != nil {
		t.Fatal(err)
	}
	b, h := epochBatch(6, 4, "g", 2)
	if _, err := l.AppendAsFollower(b, h); err != nil {
		t.Fatal(err)
	}
	b, h = epochBatch(8, 3, "h", 2) // stale epoch: not an epoch start
	if _, err := l.AppendAsFollower(b, h); err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, l, 4, map[int32][2]int64{1: {1, 4}, 2: {2, 6}, 3: {2, 6}, 4: {4, 10}})
	if got := epochFile(t, dir); got != "0\n3\n1 0\n2 4\n4 6\n" {
		t.Fatalf("checkpoint %q", got)
	}
	b, h = epochBatch(3, 9, "x", 1) // out of order: refused, cache untouched
	if _, err := l.AppendAsFollower(b, h); err == nil {
		t.Fatal("out-of-order append accepted")
	}
	if e, _ := l.LatestEpoch(); e != 4 {
		t.Fatalf("refused append changed the cache: %d", e)
	}
}

// TestEpochCheckpointRebuiltAtLoad: a missing or corrupt checkpoint is
// rebuilt from the batch headers; one naming epochs past the log end (a
// crash between the checkpoint and the data) is trimmed.
func TestEpochCheckpointRebuiltAtLoad(t *testing.T) {
	for _, tc := range []struct {
		name, content string // "" removes the file
	}{
		{"missing", ""},
		{"corrupt", "0\n5\n1 0\n"},
		{"stale tail", "0\n5\n1 0\n2 6\n4 9\n9 12\n10 15\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := openManager(t, dir)
			cfg := DefaultLogConfig()
			cfg.SegmentBytes = 200
			l, _ := m.Create(tp0, topic, cfg)
			for i, e := range []int32{1, 1, 2, 4} {
				b, h := batch(0, "v", 3)
				if _, err := l.AppendAsLeader(b, h, t0, e); err != nil {
					t.Fatal(i, err)
				}
			}
			m.Close()
			path := filepath.Join(dir, "t-0", epochCheckpointFile)
			if tc.content == "" {
				os.Remove(path)
			} else {
				os.WriteFile(path, []byte(tc.content), 0o644)
			}
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			checkEpochs(t, l, 4, map[int32][2]int64{1: {1, 6}, 3: {2, 9}, 4: {4, 12}})
			if got := epochFile(t, dir); got != "0\n3\n1 0\n2 6\n4 9\n" {
				t.Fatalf("checkpoint %q", got)
			}
		})
	}
}

// TestLazyLogEpochsInMemory: a lazy log takes its leader epoch without
// writing anything; its first append writes the checkpoint with its
// directory, and its batches carry the epoch.
func TestLazyLogEpochsInMemory(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	if err := l.AssignEpochStartOffset(7, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.AssignEpochStartOffset(6, 0); err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, l, 7, map[int32][2]int64{7: {7, 0}, 6: {6, 0}})
	if _, err := os.Stat(filepath.Join(dir, "t-0")); !os.IsNotExist(err) {
		t.Fatalf("lazy log wrote its directory: %v", err)
	}
	mustAppend(t, l, 0, "a", 2)
	if got := epochFile(t, dir); got != "0\n1\n7 0\n" {
		t.Fatalf("checkpoint %q", got)
	}
	res, _ := l.Read(0, 1<<62, 1<<20, true)
	if h, _ := record.ReadHeader(res.Records); h.PartitionLeaderEpoch != 7 {
		t.Fatalf("stored epoch %d", h.PartitionLeaderEpoch)
	}
	checkEpochs(t, l, 7, map[int32][2]int64{7: {7, 2}})
}

// TestRetentionTruncatesEpochsFromStart: deleting segments moves the first
// epoch's start up to the new log start (dropping epochs wholly below it).
func TestRetentionTruncatesEpochsFromStart(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	b, _ := batch(0, "r", 2)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(2 * len(b))
	cfg.RetentionBytes = int64(2 * len(b))
	cfg.RetentionMs = -1
	l, _ := m.Create(tp0, topic, cfg)
	for i, e := range []int32{1, 2, 2, 2, 2, 3} { // segments [0,4) [4,8) [8,12)
		b, h := batch(0, "r", 2)
		if _, err := l.AppendAsLeader(b, h, t0, e); err != nil {
			t.Fatal(i, err)
		}
	}
	l.SetHighWatermark(12)
	if _, err := l.enforceRetention(t0); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 8 || l.HighWatermark() != 12 {
		t.Fatalf("log start %d, HW %d", l.LogStartOffset(), l.HighWatermark())
	}
	checkEpochs(t, l, 3, map[int32][2]int64{2: {2, 10}, 1: {1, 8}})
	if got := epochFile(t, dir); got != "0\n2\n2 8\n3 10\n" {
		t.Fatalf("checkpoint %q", got)
	}
	m.Close()
}

// TestStartLeaderEpoch: a new leader's epoch starts at the log end offset,
// in memory for a lazy log, in the checkpoint for a loaded one; an epoch the
// cache holds, or an older one, changes nothing; the log end offset and
// high watermark come back either way.
func TestStartLeaderEpoch(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	if _, _, err := l.StartLeaderEpoch(-1); err == nil {
		t.Fatal("negative epoch taken")
	}
	if leo, hw, err := l.StartLeaderEpoch(3); err != nil || leo != 0 || hw != 0 {
		t.Fatalf("lazy: leo %d hw %d err %v", leo, hw, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t-0")); !os.IsNotExist(err) {
		t.Fatalf("lazy log wrote its directory: %v", err)
	}
	mustAppend(t, l, 0, "a", 4)
	l.SetHighWatermark(2)
	for _, epoch := range []int32{3, 2} { // held, older: no new entry
		if leo, hw, err := l.StartLeaderEpoch(epoch); err != nil || leo != 4 || hw != 2 {
			t.Fatalf("epoch %d: leo %d hw %d err %v", epoch, leo, hw, err)
		}
	}
	if got := epochFile(t, dir); got != "0\n1\n3 0\n" {
		t.Fatalf("checkpoint %q", got)
	}
	if leo, hw, err := l.StartLeaderEpoch(5); err != nil || leo != 4 || hw != 2 {
		t.Fatalf("epoch 5: leo %d hw %d err %v", leo, hw, err)
	}
	if got := epochFile(t, dir); got != "0\n2\n3 0\n5 4\n" {
		t.Fatalf("checkpoint %q", got)
	}
}

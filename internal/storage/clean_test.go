package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// compactConfig is a compact-only log config with small segments, dense
// indexes, tombstones kept 1 s after cleaning and any dirt worth cleaning.
func compactConfig() LogConfig {
	cfg := DefaultLogConfig()
	cfg.Compact, cfg.NoDelete = true, true
	cfg.SegmentBytes, cfg.SegmentMs, cfg.IndexIntervalBytes = 1500, 1000, 100
	cfg.DeleteRetentionMs, cfg.MinCleanableRatio = 1000, 0
	return cfg
}

// model is the latest record per key, as a compacted log must keep it.
type model map[string]record.Record

// keyedBatch builds one batch of records (key, value; a nil value is a
// tombstone) with the given codec at timestamp ts.
func keyedBatch(ts int64, codec int8, kvs ...[2][]byte) ([]byte, []record.Header) {
	recs := make([]recordtest.Rec, len(kvs))
	for i, kv := range kvs {
		recs[i] = recordtest.Rec{Key: kv[0], Value: kv[1]}
	}
	b := recordtest.Batch(ts, codec, recs...)
	h, err := record.Validate(b, 1<<30)
	if err != nil {
		panic(err)
	}
	return b, h
}

// appendKeyed appends a batch and records it in the model.
func appendKeyed(t testing.TB, l *Log, now time.Time, mdl model, codec int8, kvs ...[2][]byte) {
	t.Helper()
	b, h := keyedBatch(now.UnixMilli(), codec, kvs...)
	info, err := l.Append(b, h, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range kvs {
		mdl[string(kv[0])] = record.Record{Offset: info.FirstOffset + int64(i), Key: kv[0], Value: kv[1]}
	}
	commitAll(l)
}

// randomWrites appends n random batches of up to 4 records over nKeys
// keys, 15% tombstones, some compressed, the clock moving so segments
// roll by time and size.
func randomWrites(t testing.TB, l *Log, rng *rand.Rand, now *time.Time, mdl model, n, nKeys int) {
	codecs := []int8{recordtest.None, recordtest.None, recordtest.Gzip, recordtest.Zstd, recordtest.Lz4, recordtest.Snappy}
	for range n {
		kvs := make([][2][]byte, 1+rng.IntN(4))
		for i := range kvs {
			kvs[i][0] = fmt.Appendf(nil, "k%03d", rng.IntN(nKeys))
			if rng.IntN(100) >= 15 {
				kvs[i][1] = fmt.Appendf(nil, "v%d-%s", rng.Int64(), bytes.Repeat([]byte("x"), rng.IntN(40)))
			}
		}
		appendKeyed(t, l, *now, mdl, codecs[rng.IntN(len(codecs))], kvs...)
		*now = now.Add(time.Duration(rng.IntN(150)) * time.Millisecond)
	}
}

// cleanAll runs cleaning passes at now until none is due.
func cleanAll(t testing.TB, m *Manager, now time.Time) int {
	t.Helper()
	n := 0
	for ; ; n++ {
		ok, err := m.CleanOnce(now)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || n > 100 {
			return n
		}
	}
}

// checkCompacted reads the whole log and checks it against the model:
// offsets strictly increasing, every record the latest of its key, every
// live key present, tombstones present only if keepTombstones allows,
// and the offset indexes pointing at batch starts.
func checkCompacted(t testing.TB, l *Log, mdl model, tombstonesGone bool) {
	t.Helper()
	got := readAll(t, l, l.LogStartOffset())
	seen := map[string]bool{}
	last := int64(-1)
	for _, r := range got {
		if r.Offset <= last {
			t.Fatalf("offset %d after %d", r.Offset, last)
		}
		last = r.Offset
		want, ok := mdl[string(r.Key)]
		if !ok || want.Offset != r.Offset || !bytes.Equal(want.Value, r.Value) || (want.Value == nil) != (r.Value == nil) {
			t.Fatalf("record %d key %s value %q: not the latest (%d %q)", r.Offset, r.Key, r.Value, want.Offset, want.Value)
		}
		if r.Value == nil && tombstonesGone {
			t.Fatalf("tombstone of %s at %d outlived delete.retention.ms", r.Key, r.Offset)
		}
		seen[string(r.Key)] = true
	}
	for k, r := range mdl {
		if r.Value != nil && !seen[k] {
			t.Fatalf("key %s (offset %d) lost", k, r.Offset)
		}
	}
	checkCleanedIndexes(t, l)
}

// checkCleanedIndexes checks every offset index entry of every segment: its
// position starts a batch whose last offset is the entry's.
func checkCleanedIndexes(t testing.TB, l *Log) {
	t.Helper()
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.segs {
		if err := s.acquire(); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		idx, f := append([]offsetEntry(nil), s.idx...), s.f
		s.mu.Unlock()
		for _, e := range idx {
			var hb [record.HeaderSize]byte
			if _, err := f.ReadAt(hb[:], int64(e.pos)); err != nil {
				t.Fatal(err)
			}
			h, err := record.ReadHeader(hb[:])
			if err != nil || h.LastOffset() != s.base+int64(e.rel) {
				t.Fatalf("segment %d: index entry %+v points at %+v (%v)", s.base, e, h, err)
			}
		}
		s.release()
	}
}

// TestCleanerProperty: random keyed writes with tombstones and rolls,
// cleaned (also between writes), read back as the latest value per key in
// offset order; after delete.retention.ms and another pass the tombstones
// are gone; a restart reads the same.
func TestCleanerProperty(t *testing.T) {
	tombs := 0 // tombstones kept within delete.retention.ms, over all seeds
	defer func() {
		if tombs == 0 && !t.Failed() {
			t.Error("no tombstone was kept within delete.retention.ms")
		}
	}()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			dir := t.TempDir()
			m := openManager(t, dir)
			now := t0
			l, _ := m.Create(tp0, topic, compactConfig())
			mdl := model{}
			for range 3 {
				randomWrites(t, l, rng, &now, mdl, 80, 10+int(seed)*10)
				cleanAll(t, m, now)
			}
			roll := func() { // puts everything but a sentinel in rolled segments
				now = now.Add(2 * time.Second)
				appendKeyed(t, l, now, mdl, recordtest.None, [2][]byte{fmt.Append(nil, "sentinel", now.UnixMilli()), []byte("s")})
			}
			roll()
			if cleanAll(t, m, now) == 0 {
				t.Fatal("nothing cleaned")
			}
			checkCompacted(t, l, mdl, false)
			for _, r := range readAll(t, l, 0) {
				if r.Value == nil {
					tombs++
				}
			}
			now = now.Add(time.Duration(compactConfig().DeleteRetentionMs+1) * time.Millisecond)
			cleanAll(t, m, now) // nothing dirty: the tombstones past their horizon trigger a pass
			checkCompacted(t, l, mdl, true)
			roll()
			cleanAll(t, m, now)
			checkCompacted(t, l, mdl, true)
			checkReaders(t, m, l)
			if n := len(readAll(t, l, 0)); n > len(mdl) || n >= int(l.LogEndOffset())/4 {
				t.Fatalf("%d records left of %d, %d keys", n, l.LogEndOffset(), len(mdl))
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			l.SetConfig(compactConfig())
			checkCompacted(t, l, mdl, true)
		})
	}
}

// checkReaders checks the readers over a compacted log: a read from any
// offset, removed or not, starts with the batch holding the next
// surviving offset; OffsetForTimestamp finds the first surviving record
// at or after a time; a follower appending the leader's batches as read
// gets the same records; the leader epoch's end offset is the log end.
func checkReaders(t *testing.T, m *Manager, l *Log) {
	t.Helper()
	recs := readAll(t, l, l.LogStartOffset())
	for o, i := l.LogStartOffset(), 0; o < l.LogEndOffset(); o++ {
		for i < len(recs) && recs[i].Offset < o {
			i++
		}
		res, err := l.Read(o, 1<<62, 1, true)
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("read at %d: %v", o, err)
		}
		h, _ := record.ReadHeader(res.Records)
		if h.LastOffset() < o || (i < len(recs) && h.BaseOffset > recs[i].Offset) {
			t.Fatalf("read at %d: batch [%d, %d], next surviving record %d", o, h.BaseOffset, h.LastOffset(), recs[i].Offset)
		}
	}
	for _, r := range recs[:min(len(recs), 20)] {
		off, ts, ok, err := l.OffsetForTimestamp(r.Timestamp)
		if err != nil || !ok || ts < r.Timestamp || off > r.Offset {
			t.Fatalf("offset for time %d: %d at %d %v %v, want at most %d", r.Timestamp, off, ts, ok, err, r.Offset)
		}
	}
	f, err := m.Create(kafka.TopicPartition{Topic: "follower", Partition: 0}, topic, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	for o := l.LogStartOffset(); o < l.LogEndOffset(); {
		res, err := l.Read(o, 1<<62, 4096, true)
		if err != nil {
			t.Fatal(err)
		}
		hdrs := []record.Header{}
		for p := 0; p < len(res.Records); {
			h, _ := record.ReadHeader(res.Records[p:])
			hdrs = append(hdrs, h)
			p += h.Size()
			o = h.LastOffset() + 1
		}
		if _, err := f.AppendAsFollower(append([]byte(nil), res.Records...), hdrs); err != nil {
			t.Fatalf("follower append at %d: %v", o, err)
		}
	}
	if got := readAll(t, f, f.LogStartOffset()); len(got) != len(recs) || f.LogEndOffset() != l.LogEndOffset() {
		t.Fatalf("follower: %d records to %d, leader %d to %d", len(got), f.LogEndOffset(), len(recs), l.LogEndOffset())
	}
	if _, end := l.EndOffsetForEpoch(0); end != l.LogEndOffset() {
		t.Fatalf("end offset of epoch 0: %d, log end %d", end, l.LogEndOffset())
	}
	if err := m.Delete(f.tp); err != nil {
		t.Fatal(err)
	}
}

// TestCleanerKeepsProducerState: an idempotent producer whose records are
// all superseded keeps its newest batch, emptied, so after the cleaning,
// and after a kill -9 and a restart that rebuilds the state from the log,
// its last sequence is known and a retry of that batch is a duplicate;
// its older batches go.
func TestCleanerKeepsProducerState(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, compactConfig())
	now := t0
	var last []byte
	for seq := int32(0); seq < 6; seq += 2 {
		b := recordtest.Idempotent(recordtest.Batch(now.UnixMilli(), recordtest.None,
			recordtest.Rec{Key: []byte("a"), Value: []byte("1")}, recordtest.Rec{Key: []byte("b"), Value: []byte("1")}), 7, 0, seq)
		last = append([]byte(nil), b...)
		h, _ := record.Validate(b, 1<<30)
		if _, err := l.Append(b, h, now); err != nil {
			t.Fatal(err)
		}
	}
	mdl := model{}
	appendKeyed(t, l, now, mdl, recordtest.None, [2][]byte{[]byte("a"), []byte("2")}, [2][]byte{[]byte("b"), []byte("2")})
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, recordtest.None, [2][]byte{[]byte("s"), []byte("s")})
	if cleanAll(t, m, now) == 0 {
		t.Fatal("nothing cleaned")
	}
	checkCompacted(t, l, mdl, false)
	res, err := l.Read(0, 1<<62, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := record.ReadHeader(res.Records)
	if h.ProducerID != 7 || h.NumRecords != 0 || h.BaseSequence != 4 || h.BaseOffset != 4 || h.LastOffset() != 5 {
		t.Fatalf("first batch after cleaning %+v, want the producer's newest, empty", h)
	}
	m.crash()
	snaps, _ := filepath.Glob(filepath.Join(dir, tp0.String(), "*.snapshot"))
	for _, s := range snaps { // the state comes from the compacted log alone
		os.Remove(s)
	}
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	l.SetConfig(compactConfig())
	ps, err := l.ActiveProducers()
	if err != nil || len(ps) != 1 || ps[0].ProducerID != 7 || ps[0].LastSequence != 5 {
		t.Fatalf("producers after restart %+v, %v", ps, err)
	}
	hd, _ := record.Validate(last, 1<<30)
	info, err := l.Append(last, hd, now)
	if err != nil || !info.Duplicate || info.FirstOffset != 4 {
		t.Fatalf("retry of the newest batch: %+v %v", info, err)
	}
}

package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// Compaction of transactional data through the real Log: producers write
// transactions, markers end them (AppendTxnMarker), the cleaner runs, and
// a read_committed and a read_uncommitted reader look at the log before
// and after.

// wTxn is one transaction as written: its producer, first offset and
// marker offset (-1 while open).
type wTxn struct {
	pid, first, marker int64
	commit             bool
}

// txnWriter writes through a Log as transactional producers, plain
// producers and partition leaders do, and remembers what it wrote.
type txnWriter struct {
	t       testing.TB
	l       *Log
	now     time.Time
	seq     map[int64]int32
	open    map[int64]*wTxn
	txns    []*wTxn
	written map[int64]record.Record // by offset
	txnOf   map[int64]*wTxn         // the transaction of each transactional record's offset
}

func newTxnWriter(t testing.TB, l *Log) *txnWriter {
	return &txnWriter{t: t, l: l, now: t0, seq: map[int64]int32{}, open: map[int64]*wTxn{},
		written: map[int64]record.Record{}, txnOf: map[int64]*wTxn{}}
}

// put writes one batch of kvs (key, value) as producer pid in its
// transaction (opened if none is), or as a plain producer if pid < 0.
func (w *txnWriter) put(pid int64, codec int8, kvs ...[2][]byte) {
	w.t.Helper()
	b, _ := keyedBatch(w.now.UnixMilli(), codec, kvs...)
	if pid >= 0 {
		b = withProducer(b, 0x10, pid, 0, w.seq[pid])
		w.seq[pid] += int32(len(kvs))
	}
	h, err := record.Validate(b, 1<<30)
	if err != nil {
		w.t.Fatal(err)
	}
	info, err := w.l.Append(b, h, w.now)
	if err != nil {
		w.t.Fatal(err)
	}
	tx := w.open[pid]
	if pid >= 0 && tx == nil {
		tx = &wTxn{pid: pid, first: info.FirstOffset, marker: -1}
		w.open[pid], w.txns = tx, append(w.txns, tx)
	}
	for i, kv := range kvs {
		o := info.FirstOffset + int64(i)
		w.written[o] = record.Record{Offset: o, Key: kv[0], Value: kv[1]}
		if tx != nil {
			w.txnOf[o] = tx
		}
	}
	commitAll(w.l)
}

// end writes the marker of pid's open transaction.
func (w *txnWriter) end(pid int64, commit bool) {
	w.t.Helper()
	info, err := w.l.AppendTxnMarker(record.Marker{ProducerID: pid, CoordinatorEpoch: 1, Commit: commit}, w.now, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	tx := w.open[pid]
	tx.marker, tx.commit = info.FirstOffset, commit
	delete(w.open, pid)
	commitAll(w.l)
}

// roll moves the clock past segment.ms and writes a plain sentinel, so
// everything before it is in rolled segments.
func (w *txnWriter) roll() {
	w.now = w.now.Add(2 * time.Second)
	w.put(-1, recordtest.None, [2][]byte{fmt.Append(nil, "sentinel", w.now.UnixMilli()), []byte("s")})
}

// random writes n batches of 1 to 3 records (one in 8 a tombstone) over
// 12 keys, as producers 0 to 2 in transactions or as a plain producer,
// ending a third of the transactions after a batch, committed or aborted,
// and all those left open if endAll.
func (w *txnWriter) random(rng *rand.Rand, n int, endAll bool) {
	codecs := []int8{recordtest.None, recordtest.Gzip, recordtest.Zstd, recordtest.Lz4}
	for range n {
		pid := int64(rng.IntN(4)) - 1 // -1: plain
		kvs := make([][2][]byte, 1+rng.IntN(3))
		for i := range kvs {
			kvs[i] = [2][]byte{fmt.Appendf(nil, "k%02d", rng.IntN(12)), fmt.Appendf(nil, "v%d-%d", pid, rng.Int64())}
			if rng.IntN(8) == 0 {
				kvs[i][1] = nil // a tombstone
			}
		}
		w.put(pid, codecs[rng.IntN(len(codecs))], kvs...)
		if pid >= 0 && rng.IntN(3) == 0 {
			w.end(pid, rng.IntN(2) == 0)
		}
		w.now = w.now.Add(time.Duration(rng.IntN(120)) * time.Millisecond)
	}
	for pid := range int64(3) {
		if endAll && w.open[pid] != nil {
			w.end(pid, rng.IntN(2) == 0)
		}
	}
}

// logBatch is a batch as read back, decoded.
type logBatch struct {
	h      record.Header
	recs   []record.Record
	marker record.Marker
	ok     bool // a transaction marker
}

func readBatches(t testing.TB, l *Log) []logBatch {
	t.Helper()
	var out []logBatch
	for from := l.LogStartOffset(); from < l.LogEndOffset(); {
		res, err := l.Read(from, 1<<62, 1<<20, true)
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("read at %d: %v", from, err)
		}
		for p := 0; p < len(res.Records); {
			h, err := record.ReadHeader(res.Records[p:])
			if err != nil || !record.CheckCRC(res.Records[p:p+h.Size()]) {
				t.Fatalf("bad batch at %d: %v", from, err)
			}
			b := logBatch{h: h}
			raw := res.Records[p : p+h.Size()]
			if h.Control() && h.NumRecords > 0 {
				if b.marker, b.ok, err = record.ParseMarker(raw); err != nil {
					t.Fatal(err)
				}
			} else if err := record.Records(raw, func(r record.Record) bool { b.recs = append(b.recs, r); return true }); err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
			p += h.Size()
			from = h.LastOffset() + 1
		}
	}
	return out
}

// readUncommitted is what a read_uncommitted consumer gets: every data
// record below the high watermark.
func readUncommitted(t testing.TB, l *Log) []record.Record {
	var out []record.Record
	for _, b := range readBatches(t, l) {
		for _, r := range b.recs {
			if r.Offset < l.HighWatermark() {
				out = append(out, r)
			}
		}
	}
	return out
}

// readCommitted is what a read_committed consumer gets (Kafka's
// Fetcher): the batches below the last stable offset, less those of the
// aborted transactions the fetch lists, up to their ABORT markers.
func readCommitted(t testing.TB, l *Log) []record.Record {
	lso := l.LastStableOffset()
	ahead := l.AbortedTxns(l.LogStartOffset(), lso)
	slices.SortStableFunc(ahead, func(a, b AbortedTxn) int { return int(a.FirstOffset - b.FirstOffset) })
	aborted := map[int64]bool{}
	var out []record.Record
	for _, b := range readBatches(t, l) {
		if b.h.BaseOffset >= lso {
			break
		}
		for len(ahead) > 0 && ahead[0].FirstOffset <= b.h.LastOffset() {
			aborted[ahead[0].ProducerID] = true
			ahead = ahead[1:]
		}
		switch {
		case b.h.Control():
			if b.ok && !b.marker.Commit {
				delete(aborted, b.h.ProducerID)
			}
		case b.h.Transactional() && aborted[b.h.ProducerID]:
		default:
			out = append(out, b.recs...)
		}
	}
	return out
}

// checkTxnSubset: every record of after was in before, at its offset,
// unchanged; the latest record of every key of before below bound is in
// after, unless it is a tombstone (gone after delete.retention.ms).
func checkTxnSubset(t testing.TB, what string, before, after []record.Record, bound int64) {
	t.Helper()
	was := map[int64]record.Record{}
	latest := map[string]int64{}
	for _, r := range before {
		was[r.Offset] = r
		if r.Offset < bound {
			latest[string(r.Key)] = r.Offset
			if r.Value == nil {
				delete(latest, string(r.Key))
			}
		}
	}
	have := map[int64]bool{}
	for _, r := range after {
		w, ok := was[r.Offset]
		if !ok || !bytes.Equal(w.Key, r.Key) || !bytes.Equal(w.Value, r.Value) {
			t.Fatalf("%s: record %d %s=%q was not there before (%v %s=%q)", what, r.Offset, r.Key, r.Value, ok, w.Key, w.Value)
		}
		have[r.Offset] = true
	}
	for k, o := range latest {
		if !have[o] {
			t.Fatalf("%s: latest record of %s (offset %d) lost", what, k, o)
		}
	}
}

// checkTxnMarkers: a transaction whose data (a batch, maybe emptied) is
// in the log below bound still has its marker; with horizonPassed, a
// decided transaction below bound with no data left has no marker; no
// aborted record is left below bound.
func checkTxnMarkers(t testing.TB, w *txnWriter, bound int64, horizonPassed bool) {
	t.Helper()
	hasData, hasMarker := map[*wTxn]bool{}, map[*wTxn]bool{}
	byMarker := map[int64]*wTxn{}
	for _, tx := range w.txns {
		byMarker[tx.marker] = tx
	}
	for _, b := range readBatches(t, w.l) {
		if b.h.Control() {
			if tx := byMarker[b.h.BaseOffset]; tx != nil {
				hasMarker[tx] = true
			}
			continue
		}
		for _, tx := range w.txns {
			if b.h.Transactional() && tx.pid == b.h.ProducerID && b.h.BaseOffset >= tx.first && (tx.marker < 0 || b.h.BaseOffset < tx.marker) {
				hasData[tx] = true
			}
		}
		for _, r := range b.recs {
			if tx := w.txnOf[r.Offset]; tx != nil && r.Offset < bound && tx.marker >= 0 && !tx.commit {
				t.Fatalf("aborted record %d (%s) of producer %d left", r.Offset, r.Key, tx.pid)
			}
		}
	}
	for _, tx := range w.txns {
		if tx.marker < 0 || tx.marker >= bound {
			continue
		}
		if hasData[tx] && !hasMarker[tx] {
			t.Fatalf("transaction of producer %d at [%d, %d]: data left, marker gone", tx.pid, tx.first, tx.marker)
		}
		if horizonPassed && !hasData[tx] && hasMarker[tx] {
			t.Fatalf("transaction of producer %d at [%d, %d]: no data left, marker kept past delete.retention.ms", tx.pid, tx.first, tx.marker)
		}
	}
}

// TestCleanerTransactions: random transactions of three producers,
// committed or aborted, interleaved with each other and plain writes,
// cleaned between writes. Read_committed and read_uncommitted readers
// see after each pass only records they saw before, every key's latest
// record, no aborted record; markers stay while their data does and go
// after delete.retention.ms; an open transaction bounds the cleaning
// (LSO); a restart that replays the producer state from the compacted
// log finds no transaction open.
func TestCleanerTransactions(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			m := openManager(t, dir)
			l, _ := m.Create(tp0, topic, compactConfig())
			w := newTxnWriter(t, l)
			rng := rand.New(rand.NewPCG(seed, 19))
			clean := func() {
				t.Helper()
				lso := l.LastStableOffset()
				rc, ru := readCommitted(t, l), readUncommitted(t, l)
				cleanAll(t, m, w.now)
				checkTxnSubset(t, "read_committed", rc, readCommitted(t, l), lso)
				checkTxnSubset(t, "read_uncommitted", ru, readUncommitted(t, l), 0)
				checkTxnMarkers(t, w, l.firstDirtyForTest(), false)
			}
			for round := range 4 {
				w.random(rng, 40, round < 3)
				if round == 3 && w.open[1] == nil {
					w.put(1, recordtest.None, [2][]byte{[]byte("k00"), []byte("open")})
				}
				w.roll()
				clean()
			}
			// Producer 1's transaction is open: nothing at or above its
			// first offset was cleaned.
			open := w.open[1].first
			if fd := l.firstDirtyForTest(); fd > open {
				t.Fatalf("cleaned up to %d beyond the open transaction at %d", fd, open)
			}
			for pid := range int64(3) {
				if w.open[pid] != nil {
					w.end(pid, pid != 1)
				}
			}
			for range 3 { // passes to drop the data, then the markers
				w.roll()
				clean()
				w.now = w.now.Add(time.Duration(compactConfig().DeleteRetentionMs) * time.Millisecond)
				cleanAll(t, m, w.now)
			}
			checkTxnMarkers(t, w, l.firstDirtyForTest(), true)
			rc := readCommitted(t, l)
			m.crash()
			snaps, _ := filepath.Glob(filepath.Join(dir, tp0.String(), "*.snapshot"))
			for _, s := range snaps { // the producer state comes from the compacted log alone
				os.Remove(s)
			}
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			l.SetConfig(compactConfig())
			commitAll(l)
			if lso := l.LastStableOffset(); lso != l.LogEndOffset() {
				t.Fatalf("after a restart LSO %d, log end %d: a transaction looks open", lso, l.LogEndOffset())
			}
			if got := readCommitted(t, l); !slices.EqualFunc(got, rc, func(a, b record.Record) bool {
				return a.Offset == b.Offset && bytes.Equal(a.Value, b.Value)
			}) {
				t.Fatalf("read_committed after a restart: %d records, before %d", len(got), len(rc))
			}
		})
	}
}

// firstDirtyForTest is the cleaner's checkpoint: offsets below were
// cleaned.
func (l *Log) firstDirtyForTest() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.firstDirty
}

// TestCleanerTxnIndex follows one aborted and one committed transaction
// through the passes: the aborted data goes at once while its ABORT
// marker and .txnindex entry stay; the next pass drops the entry (also
// on disk: a restart reads the index without it) and stamps the marker
// with a delete horizon; the marker goes once the horizon passed. The
// committed transaction's marker goes the same way once a plain record
// superseded its data.
func TestCleanerTxnIndex(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, compactConfig())
	w := newTxnWriter(t, l)
	kv := func(k, v string) [2][]byte { return [2][]byte{[]byte(k), []byte(v)} }
	w.put(1, recordtest.Gzip, kv("a", "aborted"), kv("b", "aborted")) // 0-1
	w.put(2, recordtest.None, kv("a", "committed"))                   // 2
	w.end(1, false)                                                   // 3
	w.end(2, true)                                                    // 4
	w.put(1, recordtest.None, kv("d", "p1"))                          // 5
	w.end(1, true)                                                    // 6
	w.put(2, recordtest.None, kv("e", "p2"))                          // 7: p2's newest batch is not at 2
	w.end(2, true)                                                    // 8
	w.put(-1, recordtest.None, kv("c", "plain"))                      // 9
	w.roll()
	pass := func(want ...string) {
		t.Helper()
		if cleanAll(t, m, w.now) == 0 {
			t.Fatal("nothing cleaned")
		}
		var got []string
		for _, b := range readBatches(t, l) {
			switch {
			case b.ok && b.marker.Commit:
				got = append(got, fmt.Sprintf("%d COMMIT", b.h.BaseOffset))
			case b.ok:
				got = append(got, fmt.Sprintf("%d ABORT", b.h.BaseOffset))
			default:
				for _, r := range b.recs {
					if !bytes.HasPrefix(r.Key, []byte("sentinel")) {
						got = append(got, fmt.Sprintf("%d %s=%s", r.Offset, r.Key, r.Value))
					}
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("log after the pass at %d:\n got %q\nwant %q", w.now.UnixMilli(), got, want)
		}
	}
	wantAbortedTxns := func(want ...AbortedTxn) {
		t.Helper()
		if got := l.AbortedTxns(0, l.LogEndOffset()); !slices.Equal(got, want) {
			t.Fatalf("aborted transactions %+v, want %+v", got, want)
		}
	}
	wantAbortedTxns(AbortedTxn{ProducerID: 1, FirstOffset: 0})
	pass("2 a=committed", "3 ABORT", "4 COMMIT", "5 d=p1", "6 COMMIT", "7 e=p2", "8 COMMIT", "9 c=plain")
	wantAbortedTxns(AbortedTxn{ProducerID: 1, FirstOffset: 0})

	w.put(-1, recordtest.None, kv("a", "plain"))
	w.roll()
	pass("3 ABORT", "4 COMMIT", "5 d=p1", "6 COMMIT", "7 e=p2", "8 COMMIT", "9 c=plain", "11 a=plain")
	wantAbortedTxns()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	l.SetConfig(compactConfig())
	commitAll(l)
	w.l = l
	wantAbortedTxns()

	w.roll() // past the ABORT marker's horizon (remembered in memory only): new data makes the log dirty
	pass("4 COMMIT", "5 d=p1", "6 COMMIT", "7 e=p2", "8 COMMIT", "9 c=plain", "11 a=plain")
	w.now = w.now.Add(time.Duration(compactConfig().DeleteRetentionMs) * time.Millisecond)
	pass("5 d=p1", "6 COMMIT", "7 e=p2", "8 COMMIT", "9 c=plain", "11 a=plain")
	if lso := l.LastStableOffset(); lso != l.LogEndOffset() {
		t.Fatalf("LSO %d, log end %d", lso, l.LogEndOffset())
	}
}

package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

var (
	tp0   = kafka.TopicPartition{Topic: "t", Partition: 0}
	t0    = time.UnixMilli(1_700_000_000_000)
	topic = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

func openManager(t testing.TB, dir string) *Manager {
	t.Helper()
	m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, FileDeleteDelay: time.Minute, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// crash simulates kill -9: file handles dropped, nothing flushed, no
// checkpoint, no clean-shutdown marker.
func (m *Manager) crash() {
	for _, l := range m.snapshot() {
		l.mu.Lock()
		for _, s := range l.segments() {
			s.closeFiles()
		}
		l.closed = true
		l.mu.Unlock()
	}
	m.releaseLocks()
}

// batch builds one uncompressed batch of n values named after tag, with
// timestamps ts, ts+1, ...
func batch(ts int64, tag string, n int) ([]byte, []record.Header) {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%s-%d", tag, i)
	}
	b := recordtest.Values(ts, vals...)
	h, err := record.Validate(b, 1<<30)
	if err != nil {
		panic(err)
	}
	return b, h
}

func mustAppend(t testing.TB, l *Log, ts int64, tag string, n int) AppendInfo {
	t.Helper()
	b, h := batch(ts, tag, n)
	info, err := l.Append(b, h, t0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// readAll returns every record from offset on, decoding the batches.
func readAll(t testing.TB, l *Log, from int64) []record.Record {
	t.Helper()
	var out []record.Record
	for from < l.LogEndOffset() {
		res, err := l.Read(from, 1<<62, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) == 0 {
			t.Fatalf("empty read at %d below LEO %d", from, res.LogEndOffset)
		}
		for p := 0; p < len(res.Records); {
			h, err := record.ReadHeader(res.Records[p:])
			if err != nil || h.Size() > len(res.Records)-p || !record.CheckCRC(res.Records[p:p+h.Size()]) {
				t.Fatalf("read returned a bad batch at byte %d: %v", p, err)
			}
			// As stored: compaction may have thinned the batch (offset gaps).
			if err := record.Records(res.Records[p:p+h.Size()], func(r record.Record) bool { out = append(out, r); return true }); err != nil {
				t.Fatalf("read returned an invalid batch: %v", err)
			}
			p += h.Size()
			from = h.LastOffset() + 1
		}
	}
	return out
}

func values(rs []record.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d:%s", r.Offset, r.Value)
	}
	return out
}

// commitAll sets the high watermark to the log end offset, as a leader
// whose followers all caught up would (retention deletes only below it).
func commitAll(l *Log) { l.SetHighWatermark(l.LogEndOffset()) }

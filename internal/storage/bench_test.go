package storage

import (
	"bytes"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// batch16k is 16 records of 1 KiB: a ~16 KiB batch.
func batch16k() ([]byte, []record.Header) {
	recs := make([]recordtest.Rec, 16)
	for i := range recs {
		recs[i] = recordtest.Rec{Value: bytes.Repeat([]byte{byte(i)}, 1024)}
	}
	b := recordtest.Batch(0, recordtest.None, recs...)
	h, _ := record.Validate(b, 1<<20)
	return b, h
}

func BenchmarkAppend(b *testing.B) {
	m := openManager(b, b.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	data, hdrs := batch16k()
	h := make([]record.Header, len(hdrs))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		copy(h, hdrs)
		if _, err := l.Append(data, h, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	m := openManager(b, b.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	data, hdrs := batch16k()
	const batches = 1024
	for range batches {
		h := append([]record.Header(nil), hdrs...)
		if _, err := l.Append(data, h, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	b.SetBytes(1 << 20)
	b.ResetTimer()
	off := int64(0)
	for b.Loop() {
		res, err := l.Read(off, leo, 1<<20, true)
		if err != nil || len(res.Records) == 0 {
			b.Fatal(err)
		}
		off = (off + 16*64) % leo
	}
}

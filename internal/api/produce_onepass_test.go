package api

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// produceFromFrame parses a produce request of n records of size bytes
// from its frame and serves it, as a connection does, n times over (the
// leader assigns offsets in place, so the same frame appends again).
func produceFromFrame(t testing.TB, x *harness, n, size int) (run func(), batchBytes int) {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%0*d", size, i)
	}
	req := produceReq("t", 1, 1000, vals...)
	batchBytes = len(req.Topics[0].Partitions[0].Records)
	frame := kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)[4:]
	ctx := context.Background()
	return func() {
		h, r, err := wire.ParseRequest(frame)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := x.h.Handle(ctx, nil, h, r)
		if err != nil {
			t.Fatal(err)
		}
		if sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]; sp.ErrorCode != 0 {
			t.Fatalf("produce: %+v", sp)
		}
	}, batchBytes
}

// TestProduceOnePass (issue 22, item 4): a produce request parsed from its
// frame and appended allocates as much with 2000 records in its batch as
// with 10, so nothing per record, and allocates far fewer bytes than the
// batch holds, so the batch goes from the frame to the file without a
// copy (the CRC check and the walk over the record framing read it in
// place).
func TestProduceOnePass(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{self}, []int32{self}, 1)
	measure := func(n int) (allocs float64, bytes uint64, batch int) {
		run, batch := produceFromFrame(t, x, n, 100)
		run()
		allocs = testing.AllocsPerRun(20, run)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range 20 {
			run()
		}
		runtime.ReadMemStats(&m1)
		return allocs, (m1.TotalAlloc - m0.TotalAlloc) / 20, batch
	}
	a10, _, _ := measure(10)
	a2000, b2000, batch := measure(2000)
	t.Logf("allocations per request: %.0f with 10 records, %.0f with 2000; %d bytes allocated for a %d-byte batch", a10, a2000, b2000, batch)
	if a2000 > a10+4 {
		t.Errorf("2000 records cost %.0f allocations, 10 cost %.0f: something allocates per record", a2000, a10)
	}
	if b2000 > uint64(batch)/10 {
		t.Errorf("%d bytes allocated for a %d-byte batch: it is copied", b2000, batch)
	}
}

// BenchmarkProduceHandler: a produce request of 100 records of 1 KiB
// (acks=1, uncompressed, one partition) from its frame to the log (the
// file's write included, no fsync), as TestProduceOnePass serves it.
func BenchmarkProduceHandler(b *testing.B) {
	x := newHarness(b)
	x.lead("t", 1, []int32{self}, []int32{self}, 1)
	run, batch := produceFromFrame(b, x, 100, 1024)
	b.SetBytes(int64(batch))
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

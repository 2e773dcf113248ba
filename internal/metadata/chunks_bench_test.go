package metadata

import "testing"

// benchChunk is a full chunk as a 3-broker cluster of RF 3 has them.
func benchChunk() []StateEntry {
	es := make([]StateEntry, StateChunkSize)
	for i := range es {
		p := int32(768 + i)
		rs := []int32{p%3 + 1, (p+1)%3 + 1, (p+2)%3 + 1}
		es[i] = StateEntry{Partition: p, State: LeaderAndIsr{Leader: rs[0], LeaderEpoch: 12, ISR: rs, ControllerEpoch: 3, PartitionEpoch: 140}}
	}
	return es
}

// BenchmarkEncodeStateChunk: a controller encodes every chunk its state
// writes touch (400 per election at 100k partitions).
func BenchmarkEncodeStateChunk(b *testing.B) {
	es := benchChunk()
	buf := make([]byte, 0, 16<<10)
	b.ReportAllocs()
	for range b.N {
		buf = AppendChunkStart(buf[:0])
		for i, e := range es {
			buf = AppendChunkState(buf, i == 0, e.Partition, e.State)
		}
		buf = AppendChunkEnd(buf)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkDecodeStateChunk: every standby decodes every chunk written.
func BenchmarkDecodeStateChunk(b *testing.B) {
	doc := EncodeStateChunk(benchChunk())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeStateChunk(doc); err != nil {
			b.Fatal(err)
		}
	}
}

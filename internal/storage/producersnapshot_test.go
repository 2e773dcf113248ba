package storage

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
)

func sampleStates() *producerStates {
	s := newProducerStates()
	for _, h := range []record.Header{
		{ProducerID: 1, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 1, BaseOffset: 0, MaxTimestamp: 10},
		{ProducerID: 1, ProducerEpoch: 0, BaseSequence: 2, LastOffsetDelta: 0, BaseOffset: 2, MaxTimestamp: 11},
		{ProducerID: 5, ProducerEpoch: 7, BaseSequence: 9, LastOffsetDelta: 2, BaseOffset: 3, MaxTimestamp: 12, Attributes: 0x10},
	} {
		s.update(&h)
	}
	s.endTxn(record.Marker{ProducerID: 6, ProducerEpoch: 1, CoordinatorEpoch: 3}, 6) // a marker only
	for i := range 7 {                                                               // more than producerBatches: the ring wraps
		h := record.Header{ProducerID: 8, BaseSequence: int32(i), BaseOffset: int64(7 + i), MaxTimestamp: 20}
		s.update(&h)
	}
	return s
}

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := sampleStates()
	if err := writeSnapshot(dir, 14, want); err != nil {
		t.Fatal(err)
	}
	got, err := readSnapshot(dir, 14)
	if err != nil {
		t.Fatal(err)
	}
	// Entries compare by content: the ring may start elsewhere.
	for id, w := range want.producers {
		g := got.producers[id]
		if g == nil || g.epoch != w.epoch || g.txnFirstOffset != w.txnFirstOffset || g.n != w.n ||
			g.coordinatorEpoch != w.coordinatorEpoch {
			t.Fatalf("producer %d: got %+v, want %+v", id, g, w)
		}
		for i := 0; i < int(w.n); i++ {
			if gb, wb := g.batches[(int(g.head)+i)%producerBatches], w.batches[(int(w.head)+i)%producerBatches]; gb != wb {
				t.Fatalf("producer %d batch %d: %+v, want %+v", id, i, gb, wb)
			}
		}
	}
	if len(got.producers) != len(want.producers) {
		t.Fatalf("%d producers, want %d", len(got.producers), len(want.producers))
	}
	if len(got.open) != 1 || got.open[0] != (txnSpan{producerID: 5, first: 3, last: -1}) {
		t.Fatalf("open transactions %+v, want producer 5's from 3", got.open)
	}
	empty, err := decodeSnapshot(encodeSnapshot(nil))
	if err != nil || len(empty.producers) != 0 {
		t.Fatalf("empty snapshot: %+v, %v", empty, err)
	}
}

func TestSnapshotCorruption(t *testing.T) {
	good := encodeSnapshot(sampleStates())
	recrc := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], snapshotCRC))
		return b
	}
	cases := map[string][]byte{
		"empty":           {},
		"short header":    good[:7],
		"torn row":        good[:len(good)-5],
		"flipped bit":     flip(good, len(good)-1),
		"bad version":     recrc(withVersion(good, 2)),
		"count too large": recrc(withCount(good, 1000)),
		"negative count":  recrc(withCount(good, -1)),
	}
	for name, b := range cases {
		if _, err := decodeSnapshot(b); !errors.Is(err, ErrCorruptSnapshot) {
			t.Errorf("%s: err = %v, want ErrCorruptSnapshot", name, err)
		}
	}
	if _, err := decodeSnapshot(good); err != nil {
		t.Fatalf("the uncorrupted snapshot: %v", err)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 1
	return c
}

func withVersion(b []byte, v int16) []byte {
	c := append([]byte(nil), b...)
	binary.BigEndian.PutUint16(c, uint16(v))
	return c
}

func withCount(b []byte, n int32) []byte {
	c := append([]byte(nil), b...)
	binary.BigEndian.PutUint32(c[6:], uint32(n))
	return c
}

func TestParseSnapshotName(t *testing.T) {
	for name, want := range map[string]int64{"00000000000000000042.snapshot": 42, "00000000000000000042.snapshot.tmp": -1,
		"x.snapshot": -1, "00000000000000000042.log": -1, "-0000000000000000001.snapshot": -1} {
		off, ok := parseSnapshotName(name)
		if ok != (want >= 0) || ok && off != want {
			t.Errorf("%s: %d %v, want %d", name, off, ok, want)
		}
	}
}

package storage

import (
	"hash/maphash"
	"math/bits"
)

// offsetMap is Kafka's SkimpyOffsetMap: key hash -> offset of the latest
// record with that key, in a fixed buffer (log.cleaner.dedupe.buffer.size
// per cleaner thread). A key is its 128-bit hash (two maphash seeds; Kafka
// keeps 16 bytes of MD5), so an entry is 24 bytes; open addressing with
// linear probing, filled to at most a load factor of its slots
// (log.cleaner.io.buffer.load.factor, 0.9 by default; always one slot
// free), so a cleaning pass maps as much of the dirty section as fits and
// leaves the rest to the next pass.
type offsetMap struct {
	slots      []uint64 // 3 words a slot: hash hi (never 0 when used), hash lo, offset
	n          uint64   // slots
	size, max  int
	seed1      maphash.Seed
	seed2      maphash.Seed
	lastOffset int64 // the largest offset put, -1 none
}

const offsetMapEntryBytes = 24

// newOffsetMap sizes a map to at most bytes of memory, to be filled to
// loadFactor.
func newOffsetMap(bytes int64, loadFactor float64) *offsetMap {
	n := uint64(max(bytes/offsetMapEntryBytes, 2))
	m := &offsetMap{n: n, max: int(min(max(float64(n)*loadFactor, 0), float64(n-1))),
		seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), lastOffset: -1}
	return m
}

// alloc allocates the slots on first use: each cleaner thread has a map
// from the start, and a broker with no compacted log to clean should not
// hold its buffer (128 MiB by default). Not untouched pages either: a Go
// allocation that reuses memory the heap held before is zeroed, so
// resident (samsa-bench -idle: 37 or 165 MiB at start, run to run).
func (m *offsetMap) alloc() {
	if m.slots == nil {
		m.slots = make([]uint64, 3*m.n)
	}
}

// reset empties the map, keeping its buffer.
func (m *offsetMap) reset() {
	if m.size == 0 {
		return // clean already: do not touch the pages of an unused buffer
	}
	clear(m.slots)
	m.size, m.lastOffset = 0, -1
}

// full reports whether n more keys might not fit.
func (m *offsetMap) full(n int) bool { return m.size+n > m.max }

func (m *offsetMap) hash(key []byte) (uint64, uint64) {
	return maphash.Bytes(m.seed1, key) | 1<<63, maphash.Bytes(m.seed2, key)
}

// slot maps a hash onto [0, n) (Lemire's multiply-shift: the map uses
// the whole buffer, not the largest power of two in it).
func (m *offsetMap) slot(h uint64) uint64 {
	hi, _ := bits.Mul64(h, m.n)
	return hi
}

func (m *offsetMap) next(i uint64) uint64 {
	if i++; i == m.n {
		return 0
	}
	return i
}

// put records offset as the latest for key. The caller checks full first.
func (m *offsetMap) put(key []byte, offset int64) {
	m.alloc()
	hi, lo := m.hash(key)
	for i := m.slot(lo); ; i = m.next(i) {
		s := m.slots[3*i : 3*i+3 : 3*i+3]
		if s[0] == 0 {
			s[0], s[1], s[2] = hi, lo, uint64(offset)
			m.size++
			break
		}
		if s[0] == hi && s[1] == lo {
			s[2] = uint64(offset)
			break
		}
	}
	m.lastOffset = max(m.lastOffset, offset)
}

// get returns the latest offset put for key, -1 if none.
func (m *offsetMap) get(key []byte) int64 {
	if m.slots == nil {
		return -1
	}
	hi, lo := m.hash(key)
	for i := m.slot(lo); ; i = m.next(i) {
		s := m.slots[3*i : 3*i+3 : 3*i+3]
		if s[0] == 0 {
			return -1
		}
		if s[0] == hi && s[1] == lo {
			return int64(s[2])
		}
	}
}

package storage

import (
	"encoding/binary"
	"sort"
)

// Kafka's index entry sizes: the offset index maps a relative offset to a
// file position, the time index a timestamp to a relative offset.
const (
	offsetEntrySize = 8
	timeEntrySize   = 12
)

type offsetEntry struct{ rel, pos int32 }

type timeEntry struct {
	ts  int64
	rel int32
}

func appendOffsetEntry(dst []byte, e offsetEntry) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.rel))
	return binary.BigEndian.AppendUint32(dst, uint32(e.pos))
}

func appendTimeEntry(dst []byte, e timeEntry) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.ts))
	return binary.BigEndian.AppendUint32(dst, uint32(e.rel))
}

// parseOffsetIndex decodes an offset index file and checks it: whole
// entries, relative offsets and positions strictly increasing, positions
// inside the segment. ok is false for a corrupt index.
func parseOffsetIndex(b []byte, segSize int64) (es []offsetEntry, ok bool) {
	if len(b)%offsetEntrySize != 0 {
		return nil, false
	}
	es = make([]offsetEntry, 0, len(b)/offsetEntrySize)
	for i := 0; i < len(b); i += offsetEntrySize {
		e := offsetEntry{rel: int32(binary.BigEndian.Uint32(b[i:])), pos: int32(binary.BigEndian.Uint32(b[i+4:]))}
		if e.rel < 0 || e.pos < 0 || int64(e.pos) >= segSize {
			return nil, false
		}
		if n := len(es); n > 0 && (e.rel <= es[n-1].rel || e.pos <= es[n-1].pos) {
			return nil, false
		}
		es = append(es, e)
	}
	return es, true
}

// parseTimeIndex decodes a time index file and checks it: whole entries,
// timestamps and relative offsets non-decreasing, offsets below maxRel.
func parseTimeIndex(b []byte, maxRel int64) (es []timeEntry, ok bool) {
	if len(b)%timeEntrySize != 0 {
		return nil, false
	}
	es = make([]timeEntry, 0, len(b)/timeEntrySize)
	for i := 0; i < len(b); i += timeEntrySize {
		e := timeEntry{ts: int64(binary.BigEndian.Uint64(b[i:])), rel: int32(binary.BigEndian.Uint32(b[i+8:]))}
		if e.rel < 0 || int64(e.rel) > maxRel {
			return nil, false
		}
		if n := len(es); n > 0 && (e.ts < es[n-1].ts || e.rel < es[n-1].rel) {
			return nil, false
		}
		es = append(es, e)
	}
	return es, true
}

// lookupOffset returns the position of the largest entry with rel <= target,
// or 0: the batch holding target starts at or after it.
func lookupOffset(es []offsetEntry, rel int64) int64 {
	i := sort.Search(len(es), func(i int) bool { return int64(es[i].rel) > rel })
	if i == 0 {
		return 0
	}
	return int64(es[i-1].pos)
}

// lookupTime returns the relative offset of the largest entry with ts <
// target: every record up to it is older than target. ok is false when no
// such entry exists.
func lookupTime(es []timeEntry, ts int64) (rel int32, ok bool) {
	i := sort.Search(len(es), func(i int) bool { return es[i].ts >= ts })
	if i == 0 {
		return 0, false
	}
	return es[i-1].rel, true
}

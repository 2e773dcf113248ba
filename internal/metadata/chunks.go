package metadata

// Partition states live in chunks: the key
// /brokers/topics/<topic>/states/<n> holds the leader/ISR state of every
// existing partition in [n*StateChunkSize, (n+1)*StateChunkSize). Kafka's
// ZooKeeper layout has one znode per partition; with etcd every key written
// costs about 10 µs, so electing leaders for 30k partitions one key each
// spends a third of a second in the store alone. A chunk is written whole,
// conditional on the revision it was read at; the per-partition version
// Kafka sends to brokers (zkVersion, the partition epoch) is kept in the
// state itself and bumped by every write of that partition.
//
// The document is compact JSON, one row per partition in partition order:
//
//	{"version":1,"states":[[0,1,0,[1,2,3],1,0],[1,2,0,[2,3,1],1,0]]}
//
// a row being [partition, leader, leader_epoch, isr, controller_epoch,
// partition_epoch].
//
// Evidence for chunks: cmd/samsa-failover-bench -mode crash at 100k
// partitions, 29.7 → 12.8 µs per led partition (812313b, with the
// controller's dense tables). The rows are written and read by hand
// (AppendChunkState, readRow; 4c3d40f): BenchmarkEncodeStateChunk (256
// rows) 29.6 → 13.9 µs; BenchmarkDecodeStateChunk 62 → 49 µs, 43 → 22 KB,
// 13 → 3 allocations. encoding/json stays the reference
// (decodeChunkJSON; FuzzStateChunk holds both to it).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// StateChunkSize is how many consecutive partitions share a state key.
// 256 states are about 6 KiB: small enough that one partition's ISR change
// rewrites little, large enough that a topic of 1000 partitions is 4 keys.
const StateChunkSize = 256

// ChunkOf is the chunk holding partition p's state.
func ChunkOf(p int32) int32 { return p / StateChunkSize }

// StateEntry is one partition's state in a chunk.
type StateEntry struct {
	Partition int32
	State     LeaderAndIsr
}

// EncodeStateChunk writes a chunk document; entries are in partition order.
func EncodeStateChunk(entries []StateEntry) []byte {
	b := AppendChunkStart(make([]byte, 0, 32+len(entries)*24))
	for i, e := range entries {
		b = AppendChunkState(b, i == 0, e.Partition, e.State)
	}
	return AppendChunkEnd(b)
}

// AppendChunkStart, AppendChunkState (once per partition, in partition
// order; first for the first one) and AppendChunkEnd write a chunk
// document without building its entries.
func AppendChunkStart(b []byte) []byte { return append(b, `{"version":1,"states":[`...) }

// AppendChunkState appends one partition's row.
func AppendChunkState(b []byte, first bool, p int32, s LeaderAndIsr) []byte {
	// The row is written into room for the longest one (the chunks of an
	// election are a hundred thousand rows, where append's bookkeeping
	// per byte was most of the cost).
	room := 8 + (5+len(s.ISR))*maxInt32Len
	b = slices.Grow(b, room)
	w, i := b[len(b):len(b)+room], 0
	if !first {
		w[i], i = ',', i+1
	}
	w[i], i = '[', i+1
	i = putInt32(w, i, p)
	w[i], i = ',', i+1
	i = putInt32(w, i, s.Leader)
	w[i], i = ',', i+1
	i = putInt32(w, i, s.LeaderEpoch)
	w[i], i = ',', i+1
	w[i], i = '[', i+1
	for j, r := range s.ISR {
		if j > 0 {
			w[i], i = ',', i+1
		}
		i = putInt32(w, i, r)
	}
	w[i], w[i+1], i = ']', ',', i+2
	i = putInt32(w, i, s.ControllerEpoch)
	w[i], i = ',', i+1
	i = putInt32(w, i, s.PartitionEpoch)
	w[i], i = ']', i+1
	return b[:len(b)+i]
}

// AppendChunkEnd closes a chunk document.
func AppendChunkEnd(b []byte) []byte { return append(b, "]}"...) }

// DecodeStateChunk reads a chunk document.
func DecodeStateChunk(b []byte) ([]StateEntry, error) {
	if es, ok := decodeChunkFast(b); ok {
		return es, nil
	}
	return decodeChunkJSON(b)
}

// decodeChunkJSON is DecodeStateChunk through encoding/json: the
// reference for what is valid and for the error.
func decodeChunkJSON(b []byte) ([]StateEntry, error) {
	var doc struct {
		Version int                 `json:"version"`
		States  [][]json.RawMessage `json:"states"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("metadata: partition states: %w", err)
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("metadata: partition states: version %d", doc.Version)
	}
	out := make([]StateEntry, 0, len(doc.States))
	for i, row := range doc.States {
		if len(row) != 6 {
			return nil, fmt.Errorf("metadata: partition states: row %d has %d fields, want 6", i, len(row))
		}
		var e StateEntry
		s := &e.State
		for j, dst := range []any{&e.Partition, &s.Leader, &s.LeaderEpoch, &s.ISR, &s.ControllerEpoch, &s.PartitionEpoch} {
			if err := json.Unmarshal(row[j], dst); err != nil {
				return nil, fmt.Errorf("metadata: partition states: row %d: %w", i, err)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// decodeChunkFast is DecodeStateChunk for documents as EncodeStateChunk
// writes them (whitespace allowed); the ISRs share one backing array.
func decodeChunkFast(b []byte) ([]StateEntry, bool) {
	sc := scanner{b: b}
	var out []StateEntry
	var seen uint8
	version := int32(-1)
	ok := sc.object(func(key []byte) bool {
		switch string(key) {
		case "version":
			version = sc.int32()
			return once(&seen, 0) && sc.ok
		case "states":
			out = sc.stateRows()
			return once(&seen, 1) && sc.ok
		}
		return false
	})
	return out, ok && sc.end() && version == 1 && seen == 3
}

// stateRows reads the "states" array.
func (s *scanner) stateRows() []StateEntry {
	if !s.eat('[') {
		s.ok = false
		return nil
	}
	// Sized for rows of two brackets and ISRs of about three; anything
	// else only grows them.
	rows := bytes.Count(s.b[s.i:], []byte{'['})/2 + 1
	out := make([]StateEntry, 0, rows)
	isrs := make([]int32, 0, 3*rows+8)
	starts := make([]int, 0, rows+1) // where each row's ISR begins in isrs
	if s.eat(']') {
		return out
	}
	for s.ok {
		from := len(isrs)
		e, more, next, ok := readRow(s.b, s.i, isrs)
		if ok {
			isrs, s.i = more, next
		} else {
			e, isrs = s.row(isrs[:from])
		}
		starts = append(starts, from)
		out = append(out, e)
		if s.eat(']') {
			break
		}
		s.ok = s.ok && s.eat(',')
	}
	if !s.ok {
		return nil
	}
	// Appends may have moved isrs: the rows take their slices only now.
	starts = append(starts, len(isrs))
	for i := range out {
		out[i].State.ISR = isrs[starts[i]:starts[i+1]:starts[i+1]]
	}
	return out
}

// readRow reads a row written without whitespace, as AppendChunkState
// writes it, at b[i:], appending its ISR to isrs; ok is false for
// anything else (s.row reads it then). It keeps its place in locals, which
// made reading a chunk three times faster than the scanner's calls
// (4c3d40f's author's measure; BenchmarkDecodeStateChunk, with the
// storage sized from the document: 62 → 49 µs, 13 → 3 allocations).
func readRow(b []byte, i int, isrs []int32) (e StateEntry, _ []int32, next int, ok bool) {
	st := &e.State
	if i >= len(b) || b[i] != '[' {
		return e, isrs, i, false
	}
	var ok1, ok2, ok3 bool
	e.Partition, i, ok1 = intThen(b, i+1, ',')
	st.Leader, i, ok2 = intThen(b, i, ',')
	st.LeaderEpoch, i, ok3 = intThen(b, i, ',')
	if !ok1 || !ok2 || !ok3 || i+1 >= len(b) || b[i] != '[' {
		return e, isrs, i, false
	}
	if i++; b[i] == ']' {
		i++
	} else {
		for i < len(b) {
			r, at, ok := int32(b[i]-'0'), i+1, b[i]-'0' < 10 // one digit: most broker ids
			if !ok || at >= len(b) || b[at]-'0' < 10 {
				r, at, ok = readInt32(b, i)
			}
			if !ok || at >= len(b) || (b[at] != ',' && b[at] != ']') {
				return e, isrs, at, false
			}
			isrs, i = append(isrs, r), at+1
			if b[at] == ']' {
				break
			}
		}
	}
	if i >= len(b) || b[i] != ',' {
		return e, isrs, i, false
	}
	st.ControllerEpoch, i, ok1 = intThen(b, i+1, ',')
	st.PartitionEpoch, i, ok2 = intThen(b, i, ']')
	return e, isrs, i, ok1 && ok2
}

// intThen reads an integer at b[i:] followed by sep, and returns the index
// after sep.
func intThen(b []byte, i int, sep byte) (int32, int, bool) {
	if i+1 < len(b) && b[i]-'0' < 10 && b[i+1] == sep { // one digit: most fields
		return int32(b[i] - '0'), i + 2, true
	}
	v, i, ok := readInt32(b, i)
	if !ok || i >= len(b) || b[i] != sep {
		return 0, i, false
	}
	return v, i + 1, true
}

// row reads one row, whitespace allowed, appending its ISR to isrs.
func (s *scanner) row(isrs []int32) (StateEntry, []int32) {
	var e StateEntry
	st := &e.State
	s.ok = s.eat('[')
	e.Partition = s.int32()
	s.ok = s.ok && s.eat(',')
	st.Leader = s.int32()
	s.ok = s.ok && s.eat(',')
	st.LeaderEpoch = s.int32()
	s.ok = s.ok && s.eat(',') && s.eat('[')
	if s.ok && !s.eat(']') {
		for s.ok {
			isrs = append(isrs, s.int32())
			if s.eat(']') {
				break
			}
			s.ok = s.ok && s.eat(',')
		}
	}
	s.ok = s.ok && s.eat(',')
	st.ControllerEpoch = s.int32()
	s.ok = s.ok && s.eat(',')
	st.PartitionEpoch = s.int32()
	s.ok = s.ok && s.eat(']')
	return e, isrs
}

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

import (
	"encoding/json"
	"fmt"
	"strconv"
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
	if !first {
		b = append(b, ',')
	}
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.Leader), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.LeaderEpoch), 10)
	b = append(b, ',')
	if s.ISR == nil {
		b = append(b, "[]"...)
	} else {
		b = appendInt32s(b, s.ISR)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.ControllerEpoch), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.PartitionEpoch), 10)
	return append(b, ']')
}

// AppendChunkEnd closes a chunk document.
func AppendChunkEnd(b []byte) []byte { return append(b, "]}"...) }

// DecodeStateChunk reads a chunk document.
func DecodeStateChunk(b []byte) ([]StateEntry, error) {
	if es, ok := decodeChunkFast(b); ok {
		return es, nil
	}
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
	out := make([]StateEntry, 0, 64)
	isrs := make([]int32, 0, 256)
	var starts []int // where each row's ISR begins in isrs
	if s.eat(']') {
		return out
	}
	for s.ok {
		var e StateEntry
		st := &e.State
		s.ok = s.eat('[')
		e.Partition = s.int32()
		s.ok = s.ok && s.eat(',')
		st.Leader = s.int32()
		s.ok = s.ok && s.eat(',')
		st.LeaderEpoch = s.int32()
		s.ok = s.ok && s.eat(',') && s.eat('[')
		from := len(isrs)
		if s.ok && !s.eat(']') {
			for s.ok {
				isrs = append(isrs, s.int32())
				if s.eat(']') {
					break
				}
				s.ok = s.ok && s.eat(',')
			}
		}
		starts = append(starts, from)
		s.ok = s.ok && s.eat(',')
		st.ControllerEpoch = s.int32()
		s.ok = s.ok && s.eat(',')
		st.PartitionEpoch = s.int32()
		s.ok = s.ok && s.eat(']')
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

// DecodeLegacyState reads a per-partition state document of Kafka's layout
// ({"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}).
func DecodeLegacyState(b []byte) (LeaderAndIsr, error) {
	var s LeaderAndIsr
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("metadata: partition state: %w", err)
	}
	return s, nil
}

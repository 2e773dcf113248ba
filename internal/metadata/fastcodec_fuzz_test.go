package metadata

// Differential fuzz tests of the hand-written codecs (fastcodec.go,
// chunks.go) against encoding/json, the reference for what a document
// means and whether it is valid. Run as tests they check the seeds; to
// search further:
//
//	go test ./internal/metadata -run '^$' -fuzz FuzzAssignment -fuzztime 60s
//	go test ./internal/metadata -run '^$' -fuzz FuzzStateChunk -fuzztime 60s

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// FuzzAssignment: for any document, DecodeAssignment (fast path or not)
// and DecodeDenseAssignment read what encoding/json reads, or both fail;
// EncodeAssignment of what was read writes the bytes encoding/json writes.
func FuzzAssignment(f *testing.F) {
	for _, a := range []Assignment{
		{},
		{TopicID: TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			Partitions: map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}, 10: {3, 1, 2}, 2: {}}},
		{Partitions: map[int32][]int32{0: {1, 2, 4}}, AddingReplicas: map[int32][]int32{0: {4}}, RemovingReplicas: map[int32][]int32{0: {3}}},
		{Partitions: map[int32][]int32{-1: {2147483647}, 9: nil, 100: {-2147483648}}},
	} {
		f.Add(EncodeAssignment(a))
	}
	for _, doc := range []string{
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA","partitions":{"2":[1,2],"0":[3],"5":[],"7":null},"adding_replicas":{"2":[4]}}`,
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA==","partitions":{"3":[0]},"adding_replicas":null}`,
		`{ "version" : 3 , "partitions" : { "0" : [ 1 , 2 ] } , "extra" : 1 }`,
		`{"version":3,"partitions":{"x":[1]}}`,
		`{"version":3,"partitions":{"0":[1]},"partitions":{"1":[2]}}`,
		`{"version":3,"partitions":{"2000000000":[1]}}`,
		`{"version":3,"topic_id":null,"partitions":{"0":[1.0]}}`,
		`{"version":3,"partitions":{"0":[01]}}`,
		`{"partitions":{"\u0030":[1]}}`,
		`{"version":3,"partitions":{":":[1],"0":[/]}}`,
		`null`, `[]`, ``,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, werr := decodeAssignmentJSON(doc)
		if werr == nil && partitionNamedTwice(doc) {
			// "1" and "01" name one partition: which list wins depends on
			// map order, in encoding/json's reading as in ours.
			return
		}
		got, err := DecodeAssignment(doc)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: DecodeAssignment error %v, encoding/json's %v", doc, err, werr)
		}
		if err != nil {
			return
		}
		if !sameAssignment(got, want) {
			t.Fatalf("%q: DecodeAssignment read\n%+v\nencoding/json\n%+v", doc, got, want)
		}
		checkDense(t, doc, want)
		if enc, ref := EncodeAssignment(want), encodeAssignmentJSON(want); !bytes.Equal(enc, ref) {
			t.Fatalf("%q: EncodeAssignment wrote\n%s\nencoding/json\n%s", doc, enc, ref)
		}
	})
}

// checkDense holds DecodeDenseAssignment to the dense form of what
// encoding/json read.
func checkDense(t *testing.T, doc []byte, want Assignment) {
	t.Helper()
	wantDense, werr := want.Dense()
	got, err := DecodeDenseAssignment(doc)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: DecodeDenseAssignment error %v, reference %v", doc, err, werr)
	}
	if err != nil {
		return
	}
	if got.TopicID != wantDense.TopicID || len(got.Replicas) != len(wantDense.Replicas) ||
		!sameReplicaMap(got.AddingReplicas, wantDense.AddingReplicas) || !sameReplicaMap(got.RemovingReplicas, wantDense.RemovingReplicas) {
		t.Fatalf("%q: DecodeDenseAssignment read\n%+v\nreference\n%+v", doc, got, wantDense)
	}
	for p, rs := range got.Replicas {
		if w := wantDense.Replicas[p]; (rs == nil) != (w == nil) || !slices.Equal(rs, w) {
			t.Fatalf("%q: partition %d: dense %v, reference %v", doc, p, rs, w)
		}
	}
}

// partitionNamedTwice reports whether a replica map of doc (as
// encoding/json reads it) has two keys naming one partition.
func partitionNamedTwice(doc []byte) bool {
	var a Assignment
	if json.Unmarshal(doc, &a) != nil {
		return false
	}
	for _, raw := range []map[string][]int32{a.RawPartitions, a.RawAdding, a.RawRemoving} {
		if m, err := fromRaw(raw); err == nil && len(m) != len(raw) {
			return true
		}
	}
	return false
}

// sameAssignment compares what two readings hold: a nil map or list is
// the same as an empty one (a document's null and {} or [] differ only
// there).
func sameAssignment(a, b Assignment) bool {
	return a.TopicID == b.TopicID && sameReplicaMap(a.Partitions, b.Partitions) &&
		sameReplicaMap(a.AddingReplicas, b.AddingReplicas) && sameReplicaMap(a.RemovingReplicas, b.RemovingReplicas)
}

func sameReplicaMap(a, b map[int32][]int32) bool {
	return maps.EqualFunc(a, b, func(x, y []int32) bool { return slices.Equal(x, y) })
}

// FuzzStateChunk: for any document, DecodeStateChunk (fast path or not)
// reads what encoding/json reads, or both fail; EncodeStateChunk of what
// was read writes the bytes encoding/json writes, but for one chosen
// difference: a null ISR (which no controller writes) is written as [], so
// that every chunk written stays on the fast reader's path.
func FuzzStateChunk(f *testing.F) {
	f.Add(EncodeStateChunk(nil))
	f.Add(EncodeStateChunk([]StateEntry{
		{0, LeaderAndIsr{Leader: 1, ISR: []int32{1, 2, 3}, ControllerEpoch: 1}},
		{1, LeaderAndIsr{Leader: 2, LeaderEpoch: 7, ISR: []int32{2}, ControllerEpoch: 3, PartitionEpoch: 12}},
		{255, LeaderAndIsr{Leader: -1, LeaderEpoch: 2147483647, ISR: []int32{}, ControllerEpoch: -2147483648, PartitionEpoch: 9}},
	}))
	for _, doc := range []string{
		`{"version":1,"states":[[0,1,0,[1,2,3],1,0],[1,2,0,[2,3,1],1,0]]}`,
		` { "states" : [ [ 0 , 1 , 0 , [ 1 ] , 1 , 0 ] ] , "version" : 1 } `,
		`{"Version":1,"states":[]}`,
		`{"version":1,"version":1,"states":[]}`,
		`{"version":1,"states":[[0,1.0,0,[1],1,0]]}`,
		`{"version":1,"states":[[0,01,0,[1],1,0]]}`,
		`{"version":1,"states":[[0,2147483648,0,[1],1,0]]}`,
		`{"version":1,"states":[[0,1,0,[1,],1,0]]}`,
		`{"version":1,"states":[]} x`,
		`{"version":1,"states":[],"extra":true}`,
		`{"version":1,"st\u0061tes":[]}`,
		`{"version":1,"states":[[0,1,0,null,1,0]]}`,
		`{"version":1,"states":[[0,1,0,[1],1]]}`,
		// '/' and ':' border the digits: a digit test off by one reads them.
		`{"version":1,"states":[[0,:,0,[1],1,0]]}`,
		`{"version":1,"states":[[/,1,0,[:],1,0]]}`,
		`{"version":1,"states":[[0,1,0,[1],1,:]]}`,
		`{"version":2,"states":[]}`,
		`[]`, ``,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := DecodeStateChunk(doc)
		want, werr := decodeChunkJSON(doc)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: DecodeStateChunk error %v, encoding/json's %v", doc, err, werr)
		}
		if err != nil {
			return
		}
		if !slices.EqualFunc(got, want, sameEntry) {
			t.Fatalf("%q: DecodeStateChunk read\n%+v\nencoding/json\n%+v", doc, got, want)
		}
		if enc, ref := EncodeStateChunk(want), encodeChunkJSON(want); !bytes.Equal(enc, ref) {
			t.Fatalf("%q: EncodeStateChunk wrote\n%s\nencoding/json\n%s", doc, enc, ref)
		}
	})
}

func sameEntry(a, b StateEntry) bool {
	x, y := a.State, b.State
	return a.Partition == b.Partition && x.Leader == y.Leader && x.LeaderEpoch == y.LeaderEpoch &&
		slices.Equal(x.ISR, y.ISR) && x.ControllerEpoch == y.ControllerEpoch && x.PartitionEpoch == y.PartitionEpoch
}

// encodeChunkJSON is EncodeStateChunk through encoding/json, a nil ISR
// written as [].
func encodeChunkJSON(entries []StateEntry) []byte {
	rows := make([][]any, 0, len(entries))
	for _, e := range entries {
		s := e.State
		isr := s.ISR
		if isr == nil {
			isr = []int32{}
		}
		rows = append(rows, []any{e.Partition, s.Leader, s.LeaderEpoch, isr, s.ControllerEpoch, s.PartitionEpoch})
	}
	b, err := json.Marshal(struct {
		Version int     `json:"version"`
		States  [][]any `json:"states"`
	}{1, rows})
	if err != nil {
		panic(err)
	}
	return b
}

package metadata

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The fast chunk decoder declines (leaving encoding/json to decide)
// whatever it does not handle exactly; encoding/json then reads or refuses
// it.
func TestDecodeChunkFastDeclines(t *testing.T) {
	decline := map[string]bool{ // document: encoding/json reads it
		`{"Version":1,"states":[]}`:                         true,  // json matches keys case-insensitively
		`{"version":1,"version":1,"states":[]}`:             true,  // repeated key
		`{"version":1,"states":[[0,1.0,0,[1],1,0]]}`:        false, // not an integer
		`{"version":1,"states":[[0,01,0,[1],1,0]]}`:         false, // leading zero
		`{"version":1,"states":[[0,2147483648,0,[1],1,0]]}`: false, // out of int32
		`{"version":1,"states":[[0,1,0,[1,],1,0]]}`:         false, // trailing comma
		`{"version":1,"states":[]} x`:                       false, // trailing garbage
		`{"version":1,"states":[],"extra":true}`:            true,  // unknown field
		`{"version":1,"st\u0061tes":[]}`:                    true,  // escaped key
		`{"version":1,"states":[[0,1,0,[1],1,0]`:            false, // truncated
		`{"version":1,"states":[[0,1,0,null,1,0]]}`:         true,  // null ISR
		`[]`: false,
		``:   false,
	}
	for doc, readable := range decline {
		if es, ok := decodeChunkFast([]byte(doc)); ok {
			t.Errorf("%s: fast path accepted it as %+v", doc, es)
		}
		if _, err := DecodeStateChunk([]byte(doc)); (err == nil) != readable {
			t.Errorf("%s: DecodeStateChunk error %v, want readable=%v", doc, err, readable)
		}
	}
}

// Assignments round-trip through the fast decoder as through
// encoding/json; odd documents are declined.
func TestDecodeAssignmentFast(t *testing.T) {
	a := Assignment{TopicID: TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		Partitions:     map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}, 17: {}},
		AddingReplicas: map[int32][]int32{1: {4}}}
	doc := EncodeAssignment(a)
	got, ok := decodeAssignmentFast(doc)
	if !ok {
		t.Fatalf("declined %s", doc)
	}
	want, err := decodeAssignmentJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast %+v\njson %+v", got, want)
	}
	for _, doc := range []string{
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA","partitions":{"0":[1],"00":[2]}}`,
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEBES","partitions":{}}`, // 18-byte id
		`{"version":3,"topic_id":null}`,
		`{"version":3,"partitions":{"x":[1]}}`,
		`{"version":3,"partitions":{"0":[1]},"partitions":{"1":[2]}}`,
	} {
		if a, ok := decodeAssignmentFast([]byte(doc)); ok {
			t.Errorf("%s: fast path accepted it as %+v", doc, a)
		}
	}
	short, ok := decodeAssignmentFast([]byte(`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA==","partitions":{"3":[0]},"adding_replicas":null}`))
	if !ok || short.TopicID != a.TopicID || len(short.Partitions[3]) != 1 || short.AddingReplicas == nil || short.RemovingReplicas == nil {
		t.Fatalf("padded id / null maps: %+v %v", short, ok)
	}
}

// decodeAssignmentJSON is DecodeAssignment without the fast path.
func decodeAssignmentJSON(b []byte) (Assignment, error) {
	var a Assignment
	if err := json.Unmarshal(b, &a); err != nil {
		return a, err
	}
	var err error
	if a.Partitions, err = fromRaw(a.RawPartitions); err != nil {
		return a, err
	}
	if a.AddingReplicas, err = fromRaw(a.RawAdding); err != nil {
		return a, err
	}
	a.RemovingReplicas, err = fromRaw(a.RawRemoving)
	a.RawPartitions, a.RawAdding, a.RawRemoving = nil, nil, nil
	return a, err
}

// A dense read holds what DecodeAssignment reads, from the fast path and
// from encoding/json alike; ids out of its range are refused.
func TestDecodeDenseAssignment(t *testing.T) {
	for _, doc := range []string{
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA","partitions":{"2":[1,2],"0":[3],"5":[],"7":null},"adding_replicas":{"2":[4]}}`,
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA","partitions":{"2":[1,2],"0":[3],"5":[],"7":null},"removing_replicas":{"0":[3]},"extra":1}`,
		`{"version":3,"topic_id":"AQIDBAUGBwgJCgsMDQ4PEA"}`,
	} {
		a, err := DecodeAssignment([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		d, err := DecodeDenseAssignment([]byte(doc))
		if err != nil {
			t.Fatalf("%s: dense: %v", doc, err)
		}
		if d.TopicID != a.TopicID || !reflect.DeepEqual(d.AddingReplicas, a.AddingReplicas) || !reflect.DeepEqual(d.RemovingReplicas, a.RemovingReplicas) {
			t.Errorf("%s: dense %+v, want %+v", doc, d, a)
		}
		n := 0
		for p, rs := range d.Replicas {
			want, ok := a.Partitions[int32(p)]
			if rs != nil {
				n++
			}
			if (rs != nil) != ok || len(rs) != len(want) || !reflect.DeepEqual(append([]int32{}, rs...), append([]int32{}, want...)) {
				t.Errorf("%s: partition %d: dense %v, want %v (%v)", doc, p, rs, want, ok)
			}
		}
		if n != len(a.Partitions) {
			t.Errorf("%s: dense has %d partitions, want %d", doc, n, len(a.Partitions))
		}
	}
	// "1" and "01" name one partition: encoding/json keeps both raw keys,
	// and which list wins depends on map order, in either decoder.
	if d, err := DecodeDenseAssignment([]byte(`{"version":3,"partitions":{"1":[1],"01":[2]}}`)); err != nil ||
		len(d.Replicas) != 2 || d.Replicas[0] != nil || len(d.Replicas[1]) != 1 || (d.Replicas[1][0] != 1 && d.Replicas[1][0] != 2) {
		t.Errorf("partition named twice: %+v, %v", d, err)
	}
	for _, doc := range []string{`{"version":3,"partitions":{"-1":[1]}}`, `{"version":3,"partitions":{"2000000000":[1]}}`} {
		if d, err := DecodeDenseAssignment([]byte(doc)); err == nil {
			t.Errorf("%s: read as %+v", doc, d)
		}
	}
	// Replica lists share blocks without sharing capacity.
	d, _ := DecodeDenseAssignment([]byte(`{"version":3,"partitions":{"0":[1,2],"1":[3,4]}}`))
	_ = append(d.Replicas[0], 9)
	if d.Replicas[1][0] != 3 {
		t.Fatalf("replica lists overlap: %v", d.Replicas)
	}
}

package metadata

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The fast state encoder writes exactly what encoding/json writes.
func TestAppendStateMatchesJSON(t *testing.T) {
	for _, s := range []LeaderAndIsr{
		{},
		{Leader: 2, LeaderEpoch: 7, ISR: []int32{2, 0, 1}, ControllerEpoch: 3, PartitionEpoch: 9, Version: 1},
		{Leader: -1, LeaderEpoch: 2147483647, ISR: []int32{}, ControllerEpoch: -2147483648, Version: 1},
	} {
		want, _ := json.Marshal(s)
		if got := appendState(nil, s); string(got) != string(want) {
			t.Errorf("appendState = %s, want %s", got, want)
		}
	}
}

// The fast state decoder reads what encoding/json reads, and declines
// (leaving encoding/json to decide) whatever it does not handle exactly.
func TestDecodeStateFast(t *testing.T) {
	accept := []string{
		`{"leader":1,"leader_epoch":0,"isr":[1,2,3],"controller_epoch":4,"partition_epoch":5,"version":1}`,
		` { "isr" : [ ] , "leader" : -1 } `,
		`{"isr":null}`,
		`{}`,
	}
	for _, doc := range accept {
		got, ok := decodeStateFast([]byte(doc))
		var want LeaderAndIsr
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast %+v ok=%v, encoding/json %+v", doc, got, ok, want)
		}
	}
	decline := []string{
		`{"Leader":1}`,              // json matches keys case-insensitively
		`{"leader":1,"leader":2}`,   // repeated key
		`{"leader":1.0}`,            // not an integer
		`{"leader":01}`,             // leading zero
		`{"leader":2147483648}`,     // out of int32
		`{"leader":null}`,           // null for a number
		`{"isr":[1,]}`,              // trailing comma
		`{"leader":1} x`,            // trailing garbage
		`{"leader":1,"extra":true}`, // unknown field
		`{"le\u0061der":1}`,         // escaped key
		`{"leader":1`,               // truncated
		`[]`,
		``,
	}
	for _, doc := range decline {
		if s, ok := decodeStateFast([]byte(doc)); ok {
			t.Errorf("%s: fast path accepted it as %+v", doc, s)
		}
	}
	// Through DecodeState, declined documents still decode (or fail) as
	// encoding/json says.
	if s, err := DecodeState([]byte(`{"Leader":3,"extra":true}`)); err != nil || s.Leader != 3 {
		t.Fatalf("fallback: %+v %v", s, err)
	}
	if _, err := DecodeState([]byte(`{"leader":"x"}`)); err == nil {
		t.Fatal("a string leader decoded")
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

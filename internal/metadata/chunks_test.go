package metadata

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A chunk survives encode and decode, through both the fast decoder and
// encoding/json (the document with extra whitespace and a reordered
// top level, which the fast path still reads, and one it must leave to
// encoding/json).
func TestStateChunkRoundTrip(t *testing.T) {
	in := []StateEntry{
		{Partition: 256, State: LeaderAndIsr{Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2, 3}, ControllerEpoch: 2, PartitionEpoch: 7}},
		{Partition: 257, State: LeaderAndIsr{Leader: -1, LeaderEpoch: 0, ISR: []int32{}, ControllerEpoch: 1, PartitionEpoch: 0}},
		{Partition: 300, State: LeaderAndIsr{Leader: 2, LeaderEpoch: 2147483647, ISR: []int32{2}, ControllerEpoch: 9, PartitionEpoch: 1}},
	}
	b := EncodeStateChunk(in)
	want := `{"version":1,"states":[[256,1,3,[1,2,3],2,7],[257,-1,0,[],1,0],[300,2,2147483647,[2],9,1]]}`
	if string(b) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", b, want)
	}
	fast, ok := decodeChunkFast(b)
	if !ok || !reflect.DeepEqual(fast, in) {
		t.Fatalf("fast decode: %v %+v", ok, fast)
	}
	spaced := ` { "states" : [ [256, 1,3 , [ 1 , 2,3 ] ,2,7 ] , [257,-1,0,[ ],1,0],[300,2,2147483647,[2],9,1]] , "version" : 1 } `
	if got, err := DecodeStateChunk([]byte(spaced)); err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("spaced: %v %+v", err, got)
	}
	// An escaped key is beyond the fast path; encoding/json reads it.
	escaped := strings.Replace(want, `"states"`, `"st\u0061tes"`, 1)
	if _, ok := decodeChunkFast([]byte(escaped)); ok {
		t.Fatal("fast path read an escaped key")
	}
	got, err := DecodeStateChunk([]byte(escaped))
	if err != nil || len(got) != 3 || got[2].State.LeaderEpoch != 2147483647 || !reflect.DeepEqual(got[0].State.ISR, []int32{1, 2, 3}) {
		t.Fatalf("escaped: %v %+v", err, got)
	}
	// The ISRs of the fast decode do not share capacity: appending to one
	// leaves the next intact.
	_ = append(fast[0].State.ISR, 99)
	if fast[1].State.ISR == nil || len(fast[1].State.ISR) != 0 || fast[2].State.ISR[0] != 2 {
		t.Fatalf("ISRs overlap: %+v", fast)
	}
}

// Malformed chunks are errors, never panics or partial states.
func TestStateChunkBad(t *testing.T) {
	for _, doc := range []string{
		``,
		`{}`,
		`{"version":2,"states":[]}`,
		`{"version":1,"states":[[0,1,0,[1],1]]}`,
		`{"version":1,"states":[[0,1,0,[1],1,0,5]]}`,
		`{"version":1,"states":[[0,1,0,1,1,0]]}`,
		`{"version":1,"states":[[0,1,0,[1],1,99999999999]]}`,
		`{"version":1,"states":[[0,"1",0,[1],1,0]]}`,
		`{"version":1,"states":[[0,1,0,[1],1,0]]`,
	} {
		if got, err := DecodeStateChunk([]byte(doc)); err == nil {
			t.Errorf("%q decoded: %+v", doc, got)
		}
	}
}

// Chunk keys parse back to their topic and chunk; other keys under a topic
// do not parse.
func TestStateChunkKeys(t *testing.T) {
	if ChunkOf(255) != 0 || ChunkOf(256) != 1 {
		t.Fatal("chunk boundaries")
	}
	topic, ch, ok := ParseTopicsKey(StateChunkKey("a.b-c", 7))
	if !ok || topic != "a.b-c" || ch != 7 {
		t.Fatalf("%q %d %v", topic, ch, ok)
	}
	if topic, ch, ok := ParseTopicsKey(TopicKey("t")); !ok || topic != "t" || ch != -1 {
		t.Fatalf("topic key: %q %d %v", topic, ch, ok)
	}
	for _, k := range []string{TopicsPrefix + "t/states/", TopicsPrefix + "t/states/07", TopicsPrefix + "t/states/-1",
		TopicsPrefix + "t/partitions/0/state", TopicsPrefix + "t/states/1/x"} {
		if _, _, ok := ParseTopicsKey(k); ok {
			t.Errorf("%q parsed", k)
		}
	}
}

// Rows are written as strconv writes their numbers, for every int32
// magnitude and sign.
func TestAppendChunkStateNumbers(t *testing.T) {
	vals := []int32{0, 1, 9, 10, 99, 100, 12345, -1, -9, -10, -12345, math.MaxInt32, math.MinInt32}
	for i, v := range vals {
		w := vals[(i+1)%len(vals)]
		st := LeaderAndIsr{Leader: v, LeaderEpoch: w, ISR: []int32{w, v}, ControllerEpoch: -v, PartitionEpoch: v / 7}
		got := string(AppendChunkState([]byte("x"), i%2 == 0, v, st))
		want := "x"
		if i%2 != 0 {
			want += ","
		}
		num := func(n int32) string { return strconv.FormatInt(int64(n), 10) }
		want += "[" + num(v) + "," + num(v) + "," + num(w) + ",[" + num(w) + "," + num(v) + "]," + num(-v) + "," + num(v/7) + "]"
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

// Every cut of a chunk document and every byte of it replaced is read
// the same by the fast path and encoding/json, or refused by both, never
// a panic.
func TestStateChunkCutsAndFlips(t *testing.T) {
	doc := EncodeStateChunk([]StateEntry{
		{Partition: 0, State: LeaderAndIsr{Leader: 1, LeaderEpoch: 12, ISR: []int32{1, 22, 3}, ControllerEpoch: 2, PartitionEpoch: 7}},
		{Partition: 1, State: LeaderAndIsr{Leader: -1, ISR: []int32{}, ControllerEpoch: 1}},
		{Partition: 2, State: LeaderAndIsr{Leader: 3, LeaderEpoch: 5, ISR: []int32{3}, ControllerEpoch: 10, PartitionEpoch: 100}},
	})
	check := func(b []byte) {
		t.Helper()
		fast, ok := decodeChunkFast(b)
		if !ok {
			return // left to encoding/json
		}
		ref, err := decodeChunkJSON(b)
		if err != nil || !reflect.DeepEqual(fast, ref) {
			t.Errorf("%q: fast %+v, encoding/json %+v (%v)", b, fast, ref, err)
		}
	}
	for n := range len(doc) {
		check(doc[:n])
	}
	for i := range doc {
		for _, c := range []byte("0-9,[] x\"") {
			b := slices.Clone(doc)
			b[i] = c
			check(b)
		}
	}
}

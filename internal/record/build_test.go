package record

import (
	"bytes"
	"testing"
)

// Build's batch passes Validate and reads back record by record, a
// tombstone as a nil value.
func TestBuild(t *testing.T) {
	b := Build(1234, []KV{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2")}})
	hdrs, err := Validate(b, 1<<20)
	if err != nil || len(hdrs) != 1 || hdrs[0].NumRecords != 2 {
		t.Fatalf("validate: %v %+v", err, hdrs)
	}
	var got []Record
	if err := Records(b, func(r Record) bool { got = append(got, r); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[0].Value, []byte("v1")) || got[1].Value != nil ||
		string(got[1].Key) != "k2" || got[1].Offset != 1 || got[0].Timestamp != 1234 {
		t.Fatalf("records: %+v", got)
	}
}

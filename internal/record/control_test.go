package record

import (
	"errors"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestMarkerRoundTrip(t *testing.T) {
	for _, m := range []Marker{
		{ProducerID: 7, ProducerEpoch: 3, CoordinatorEpoch: 12, Commit: true},
		{ProducerID: 1 << 40, ProducerEpoch: 0, CoordinatorEpoch: 0, Commit: false},
	} {
		b := BuildMarker(m, 1234)
		hs, err := Validate(b, 1<<20)
		if err != nil {
			t.Fatalf("%+v: validate: %v", m, err)
		}
		h := hs[0]
		if !h.Control() || !h.Transactional() || h.ProducerID != m.ProducerID || h.ProducerEpoch != m.ProducerEpoch ||
			h.BaseSequence != -1 || h.NumRecords != 1 || h.MaxTimestamp != 1234 {
			t.Fatalf("%+v: header %+v", m, h)
		}
		got, ok, err := ParseMarker(b)
		if err != nil || !ok || got != m {
			t.Fatalf("parse %+v: %+v %v %v", m, got, ok, err)
		}
		// The wire form is Kafka's: key version 0 + type, value version 0 + epoch.
		_ = Records(b, func(r Record) bool {
			var k kmsg.ControlRecordKey
			var v kmsg.EndTxnMarker
			if k.ReadFrom(r.Key) != nil || v.ReadFrom(r.Value) != nil || len(r.Key) != 4 || len(r.Value) != 6 ||
				k.Version != 0 || v.Version != 0 || v.CoordinatorEpoch != m.CoordinatorEpoch ||
				(k.Type == kmsg.ControlRecordKeyTypeCommit) != m.Commit {
				t.Fatalf("%+v: record key %x value %x", m, r.Key, r.Value)
			}
			return true
		})
	}
}

func TestParseMarkerRefuses(t *testing.T) {
	if _, _, err := ParseMarker(recordtest.Values(0, "x")); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("data batch: %v", err)
	}
	// A control batch whose key has an unknown type is not a marker.
	other := recordtest.Batch(0, recordtest.None, recordtest.Rec{
		Key: (&kmsg.ControlRecordKey{Type: 3}).AppendTo(nil), Value: []byte{0, 0}})
	other[offAttributes+1] |= attrControl
	if _, ok, err := ParseMarker(other); ok || err != nil {
		t.Fatalf("unknown control type: %v %v", ok, err)
	}
	// A control batch the cleaner emptied is no marker either.
	empty, err := Rebuild(nil, Header{Attributes: attrTransactional | attrControl, ProducerID: 1, BaseSequence: -1}, nil, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ParseMarker(empty); ok || err != nil {
		t.Fatalf("empty control batch: %v %v", ok, err)
	}
	short := recordtest.Batch(0, recordtest.None, recordtest.Rec{Key: []byte{0}, Value: nil})
	short[offAttributes+1] |= attrControl
	if _, _, err := ParseMarker(short); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("short key: %v", err)
	}
}

package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A full snapshot survives encoding at v8 as Kafka's Type field (tag 0 =
// 2), and only there: v7 has no tagged field of that place.
func TestFullUpdateMetadataOnTheWire(t *testing.T) {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = 8
	if IsFullUpdateMetadata(req) {
		t.Fatal("a new request is full")
	}
	MarkFullUpdateMetadata(req)
	b := req.AppendTo(nil)
	got := kmsg.NewPtrUpdateMetadataRequest()
	got.Version = 8
	if err := got.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if !IsFullUpdateMetadata(got) {
		t.Fatalf("decoded request is not full: % x", b)
	}
	// Kafka's encoding of the tagged field: the request's tag section is
	// its last bytes: one tag, key 0, length 1, value 2.
	if tail := b[len(b)-4:]; tail[0] != 1 || tail[1] != 0 || tail[2] != 1 || tail[3] != 2 {
		t.Fatalf("tag section % x", tail)
	}
	inc := kmsg.NewPtrUpdateMetadataRequest()
	inc.Version = 8
	inc.UnknownTags.Set(0, []byte{1}) // INCREMENTAL
	if IsFullUpdateMetadata(inc) {
		t.Fatal("an incremental request is full")
	}
}

package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// UpdateMetadata v8 carries a Type (KIP-866; a tagged field, tag 0): 2 for
// a full snapshot of the cluster's metadata, 1 for an increment, 0
// unknown. A broker that gets a full snapshot drops the topics it does not
// list, as Kafka's ZkMetadataCache does with a FULL request: they were
// deleted while the broker did not hear of it. kmsg does not model the
// field, so it travels as the request's unknown tag 0.
const (
	updateMetadataTypeTag  = 0
	updateMetadataTypeFull = 2
)

// MarkFullUpdateMetadata makes req (v8+) a full snapshot.
func MarkFullUpdateMetadata(req *kmsg.UpdateMetadataRequest) {
	req.UnknownTags.Set(updateMetadataTypeTag, []byte{updateMetadataTypeFull})
}

// IsFullUpdateMetadata reports whether req is a full snapshot.
func IsFullUpdateMetadata(req *kmsg.UpdateMetadataRequest) bool {
	full := false
	req.UnknownTags.Each(func(key uint32, val []byte) {
		if key == updateMetadataTypeTag {
			full = len(val) == 1 && val[0] == updateMetadataTypeFull
		}
	})
	return full
}

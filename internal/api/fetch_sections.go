package api

// Fetch responses carrying sections (issue 22): on a connection that sends
// them (server.SendsSections), a fetch reads each partition's batches as a
// section of its segment file (storage.ReadSection) instead of bytes, puts
// server.SectionPlaceholder in the partition's RecordBatches and hands the
// sections to the server, which sends them with sendfile in place of the
// placeholders. The response is still encoded by kmsg: the placeholders are
// found by decoding the encoded body with kmsg (its byte fields alias the
// body) and pairing its partitions with the response's.

import (
	"fmt"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/server"
)

// fetchPlaceholders locates the placeholders of resp in its encoded body.
func fetchPlaceholders(resp *kmsg.FetchResponse) server.Locator {
	return func(body []byte) ([]int, error) {
		dec := kmsg.FetchResponse{Version: resp.Version}
		if err := dec.UnsafeReadFrom(body); err != nil {
			return nil, fmt.Errorf("api: decoding the fetch response to place its sections: %w", err)
		}
		if len(dec.Topics) != len(resp.Topics) {
			return nil, fmt.Errorf("api: fetch response decodes to %d topics, not %d", len(dec.Topics), len(resp.Topics))
		}
		base := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
		var pos []int
		for ti := range resp.Topics {
			ps, ds := resp.Topics[ti].Partitions, dec.Topics[ti].Partitions
			if len(ps) != len(ds) {
				return nil, fmt.Errorf("api: fetch response topic %d decodes to %d partitions, not %d", ti, len(ds), len(ps))
			}
			for pi := range ps {
				if !server.IsSectionPlaceholder(ps[pi].RecordBatches) {
					continue
				}
				rb := ds[pi].RecordBatches
				if len(rb) != 1 {
					return nil, fmt.Errorf("api: fetch response placeholder decodes to %d bytes", len(rb))
				}
				pos = append(pos, int(uintptr(unsafe.Pointer(&rb[0]))-base))
			}
		}
		return pos, nil
	}
}

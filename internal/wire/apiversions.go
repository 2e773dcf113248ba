package wire

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersionsResponse builds the ApiVersions response at the given version.
//
// As Kafka's ApiVersionsRequest.getErrorResponse does: with no error it lists
// every key of Supported, sorted by key, and (v3+) the finalized features
// (none, at epoch 0); with UNSUPPORTED_VERSION it lists
// only ApiVersions' own range (KIP-511), so the client can retry at a version
// this broker understands; with any other error it lists nothing. An answer
// to an unsupported ApiVersions version must be built with version 0.
func ApiVersionsResponse(version int16, errorCode int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(version)
	resp.ErrorCode = errorCode
	switch errorCode {
	case 0:
		for key, rng := range Supported {
			resp.ApiKeys = append(resp.ApiKeys, apiKey(key, rng))
		}
		slices.SortFunc(resp.ApiKeys, func(a, b kmsg.ApiVersionsResponseApiKey) int {
			return int(a.ApiKey) - int(b.ApiKey)
		})
		// KIP-584 (v3+): no feature is finalized, as in a ZooKeeper-mode
		// Kafka whose controller created an empty /feature node (epoch
		// 0); see api/57_update_features.go.
		if version >= 3 {
			resp.FinalizedFeaturesEpoch = 0
		}
	case kerr.UnsupportedVersion.Code:
		key := int16(kmsg.ApiVersions)
		if rng, ok := Supported[key]; ok {
			resp.ApiKeys = append(resp.ApiKeys, apiKey(key, rng))
		}
	}
	return resp
}

func apiKey(key int16, rng VersionRange) kmsg.ApiVersionsResponseApiKey {
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey, k.MinVersion, k.MaxVersion = key, rng.Min, rng.Max
	return k
}

package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestApiVersionsResponse(t *testing.T) {
	ok := ApiVersionsResponse(3, 0)
	if ok.GetVersion() != 3 || ok.ErrorCode != 0 || len(ok.ApiKeys) != len(Supported) {
		t.Fatalf("response %+v", ok)
	}
	for i, k := range ok.ApiKeys {
		if i > 0 && ok.ApiKeys[i-1].ApiKey >= k.ApiKey {
			t.Fatalf("keys not sorted: %+v", ok.ApiKeys)
		}
		if rng := Supported[k.ApiKey]; rng.Min != k.MinVersion || rng.Max != k.MaxVersion {
			t.Fatalf("key %d: %d-%d, want %+v", k.ApiKey, k.MinVersion, k.MaxVersion, rng)
		}
	}

	// Kafka's ApiVersionsRequest.getErrorResponse: UNSUPPORTED_VERSION
	// carries only ApiVersions' own range; other errors carry none.
	unsup := ApiVersionsResponse(0, kerr.UnsupportedVersion.Code)
	want := Supported[int16(kmsg.ApiVersions)]
	if unsup.GetVersion() != 0 || unsup.ErrorCode != 35 || len(unsup.ApiKeys) != 1 ||
		unsup.ApiKeys[0].ApiKey != 18 || unsup.ApiKeys[0].MaxVersion != want.Max {
		t.Fatalf("unsupported response %+v", unsup)
	}
	if invalid := ApiVersionsResponse(3, kerr.InvalidRequest.Code); len(invalid.ApiKeys) != 0 {
		t.Fatalf("invalid-request response lists keys: %+v", invalid.ApiKeys)
	}
}

// KIP-584: v3+ carries the finalized features epoch (0: an empty
// finalized set, not "unknown"); the tag must survive encoding.
func TestApiVersionsFinalizedFeatures(t *testing.T) {
	for _, v := range []int16{3, 4} {
		if v > (&kmsg.ApiVersionsResponse{}).MaxVersion() {
			continue
		}
		resp := ApiVersionsResponse(v, 0)
		back := kmsg.NewPtrApiVersionsResponse()
		back.SetVersion(v)
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatal(err)
		}
		if back.FinalizedFeaturesEpoch != 0 || len(back.FinalizedFeatures) != 0 {
			t.Fatalf("v%d: finalized features epoch %d, features %+v; want epoch 0 and none", v, back.FinalizedFeaturesEpoch, back.FinalizedFeatures)
		}
	}
	if old := ApiVersionsResponse(2, 0); old.FinalizedFeaturesEpoch != -1 {
		t.Fatalf("v2 response sets the v3 finalized features epoch: %d", old.FinalizedFeaturesEpoch)
	}
}

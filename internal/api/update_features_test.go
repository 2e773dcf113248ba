package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestUpdateFeatures(t *testing.T) {
	x := newHarness(t)
	update := func(name string, level int16, typ int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, typ
		return u
	}
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 1
	req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{
		update("transaction.version", 2, upgradeOnly),    // KIP-890 part 2: not implemented
		update("group.version", 1, upgradeOnly),          // KIP-848: not implemented
		update("metadata.version", -1, safeDowngrade),    // below 0
		update("kraft.version", 0, safeDowngrade),        // removing what is not set
		update("eligible.leader.replicas.version", 0, 9), // unknown upgrade type
		update("", 1, upgradeOnly),
		update("group.version", 0, unsafeDowngrade), // repeated
	}
	want := []int16{
		kerr.InvalidUpdateVersion.Code, kerr.InvalidUpdateVersion.Code, kerr.InvalidUpdateVersion.Code, 0,
		kerr.InvalidUpdateVersion.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code,
	}
	resp := x.h.updateFeatures(req)
	if resp.ErrorCode != 0 || len(resp.Results) != len(want) {
		t.Fatalf("response %+v", resp)
	}
	for i, r := range resp.Results {
		if r.Feature != req.FeatureUpdates[i].Feature || r.ErrorCode != want[i] {
			t.Errorf("update %d (%s): code %d, want %d", i, r.Feature, r.ErrorCode, want[i])
		}
		if (r.ErrorCode != 0) != (r.ErrorMessage != nil) {
			t.Errorf("update %d: message %v with code %d", i, r.ErrorMessage, r.ErrorCode)
		}
	}
	if m := resp.Results[0].ErrorMessage; m == nil || *m != "Invalid update version 2 for feature transaction.version. Samsa broker 1 only supports version 0 of every feature." {
		t.Errorf("message %v", m)
	}

	// v0: allow_downgrade instead of an upgrade type.
	v0 := kmsg.NewPtrUpdateFeaturesRequest()
	v0.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{update("transaction.version", 0, 0)}
	v0.FeatureUpdates[0].AllowDowngrade = true
	if r := x.h.updateFeatures(v0); r.ErrorCode != 0 || len(r.Results) != 1 || r.Results[0].ErrorCode != 0 {
		t.Errorf("v0 downgrade to 0: %+v", r)
	}

	// v2: no results; the first failure is the top-level error.
	v2 := kmsg.NewPtrUpdateFeaturesRequest()
	v2.Version = 2
	v2.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{update("kraft.version", 0, safeDowngrade), update("transaction.version", 2, upgradeOnly)}
	if r := x.h.updateFeatures(v2); r.ErrorCode != kerr.InvalidUpdateVersion.Code || r.ErrorMessage == nil || len(r.Results) != 0 {
		t.Errorf("v2: %+v", r)
	}

	// Only the controller answers (ZooKeeper mode).
	x.h.NodeID = self + 1
	if r := x.h.updateFeatures(req); r.ErrorCode != kerr.NotController.Code || len(r.Results) != 0 {
		t.Errorf("not the controller: %+v", r)
	}
}

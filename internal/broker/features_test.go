package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KIP-584 with a real client: kadm routes UpdateFeatures to the controller,
// which refuses a level Samsa cannot finalize with INVALID_UPDATE_VERSION
// (not UNSUPPORTED_VERSION); ApiVersions v3 reports no finalized feature at
// epoch 0.
func TestFeatures(t *testing.T) {
	brokers := startCluster(t, 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, brokers[0]))
	res, err := adm.UpdateFeatures(ctx, false,
		kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 2, UpgradeType: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := res["transaction.version"].Err; !errors.Is(got, kerr.InvalidUpdateVersion) {
		t.Fatalf("transaction.version 2: %v, want INVALID_UPDATE_VERSION", got)
	}
	res, err = adm.UpdateFeatures(ctx, true, kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: 2})
	if err != nil || res.Error() != nil {
		t.Fatalf("removing an unset feature: %v %v", err, res.Error())
	}

	// Sent to the broker that is not the controller: NOT_CONTROLLER.
	other := brokers[0]
	if c := controllerOf(t, brokers); c == other {
		other = brokers[1]
	}
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 1
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel = "transaction.version", 2
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	if resp := rawRequest(t, other.Addr().String(), req).(*kmsg.UpdateFeaturesResponse); resp.ErrorCode != kerr.NotController.Code {
		t.Fatalf("non-controller answered %+v", resp)
	}

	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "samsa-test", "1"
	resp := rawRequest(t, brokers[0].Addr().String(), av).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || resp.FinalizedFeaturesEpoch != 0 || len(resp.FinalizedFeatures) != 0 {
		t.Fatalf("ApiVersions v3: code %d, finalized epoch %d, features %+v", resp.ErrorCode, resp.FinalizedFeaturesEpoch, resp.FinalizedFeatures)
	}
}

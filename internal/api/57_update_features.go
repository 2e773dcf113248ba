package api

// UpdateFeatures (key 57), v0–v2, and the features ApiVersions v3+ reports
// (KIP-584).
//
// Samsa finalizes no feature. It implements only level 0 of the features
// Kafka defines: the classic group protocol (group.version 0, no KIP-848),
// transactions without KIP-890 part 2 (transaction.version 0), no KRaft
// (metadata.version, kraft.version). ApiVersions therefore reports an empty
// finalized set at epoch 0 — what a ZooKeeper-mode Kafka broker reports
// once its controller has created an empty /feature node — and no supported
// ranges (Kafka sends none whose minimum is 0 below ApiVersions v4).
//
// UpdateFeatures is the controller's, as in ZooKeeper mode (another broker
// answers NOT_CONTROLLER). Each update is judged as KRaft's
// FeatureControlManager does, with its error code and wording:
//   - an unknown upgrade type, a negative level, or a level this broker
//     cannot finalize (every level ≥ 1): INVALID_UPDATE_VERSION;
//   - an empty or repeated feature name: INVALID_REQUEST;
//   - level 0 (remove the finalized level): nothing to remove, so success.
//
// validate_only changes nothing, as nothing is ever written. v2 carries no
// per-feature results: the first failure is the top-level error (Kafka 3.9).

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Upgrade types of UpdateFeatures v1+ (FeatureUpdate.UpgradeType).
const (
	upgradeOnly     = 1
	safeDowngrade   = 2
	unsafeDowngrade = 3
)

func (h *Handler) updateFeatures(req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if h.Meta.ControllerID() != h.NodeID {
		resp.ErrorCode = kerr.NotController.Code
		return resp
	}
	seen := map[string]bool{}
	for _, u := range req.FeatureUpdates {
		code, msg := h.judgeFeatureUpdate(req.Version, u, seen)
		if code != 0 && resp.ErrorCode == 0 && req.Version >= 2 {
			resp.ErrorCode, resp.ErrorMessage = code, &msg
		}
		if req.Version < 2 {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature, r.ErrorCode = u.Feature, code
			if code != 0 {
				r.ErrorMessage = &msg
			}
			resp.Results = append(resp.Results, r)
		}
	}
	return resp
}

// judgeFeatureUpdate returns the error code and message of one update.
func (h *Handler) judgeFeatureUpdate(version int16, u kmsg.UpdateFeaturesRequestFeatureUpdate, seen map[string]bool) (int16, string) {
	if u.Feature == "" {
		return kerr.InvalidRequest.Code, "Feature name can not be empty."
	}
	if seen[u.Feature] {
		return kerr.InvalidRequest.Code, fmt.Sprintf("Feature %s appears more than once in the request.", u.Feature)
	}
	seen[u.Feature] = true
	typ := u.UpgradeType
	if version == 0 {
		typ = upgradeOnly
		if u.AllowDowngrade {
			typ = safeDowngrade
		}
	}
	invalid := func(why string) (int16, string) {
		h.Logger.Warn("update features: refused", "feature", u.Feature, "level", u.MaxVersionLevel, "reason", why)
		return kerr.InvalidUpdateVersion.Code,
			fmt.Sprintf("Invalid update version %d for feature %s. %s", u.MaxVersionLevel, u.Feature, why)
	}
	switch {
	case typ != upgradeOnly && typ != safeDowngrade && typ != unsafeDowngrade:
		return invalid("The controller does not support the given upgrade type.")
	case u.MaxVersionLevel < 0:
		return invalid("A feature version cannot be less than 0.")
	case u.MaxVersionLevel > 0:
		return invalid(fmt.Sprintf("Samsa broker %d only supports version 0 of every feature.", h.NodeID))
	}
	return 0, ""
}

package api

// Heartbeat (key 12), v0–v4.
//
// Extends the member's session; REBALANCE_IN_PROGRESS tells it to rejoin;
// UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION and FENCED_INSTANCE_ID (v3+) as
// group.Group.Heartbeat decides.

import "github.com/twmb/franz-go/pkg/kmsg"

func (h *Handler) heartbeat(req *kmsg.HeartbeatRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if h.Groups == nil {
		resp.ErrorCode = errorCode(errNoCoordinator)
		return resp
	}
	resp.ErrorCode = errorCode(h.Groups.Heartbeat(req.Group, req.MemberID, req.InstanceID, req.Generation))
	return resp
}

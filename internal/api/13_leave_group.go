package api

// LeaveGroup (key 13), v0–v5.
//
// v0–v2 name one member (its error is the response's); v3+ a batch of
// members, by member id or by group.instance.id alone (KIP-345), each with
// its own error. The group rebalances without them.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) leaveGroup(req *kmsg.LeaveGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if h.Groups == nil {
		resp.ErrorCode = errorCode(errNoCoordinator)
		return resp
	}
	members := []group.LeaveMember{{MemberID: req.MemberID}}
	if req.Version >= 3 {
		members = members[:0]
		for _, m := range req.Members {
			members = append(members, group.LeaveMember{MemberID: m.MemberID, InstanceID: m.InstanceID})
		}
	}
	err, errs := h.Groups.Leave(req.Group, members)
	resp.ErrorCode = errorCode(err)
	if err != nil {
		return resp
	}
	if req.Version < 3 {
		resp.ErrorCode = errorCode(errs[0])
		return resp
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, errorCode(errs[i])
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

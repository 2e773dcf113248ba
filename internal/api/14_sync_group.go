package api

// SyncGroup (key 14), v0–v5.
//
// A follower's request waits for the leader's; the leader's assignment is
// written to __consumer_offsets and every waiting member is answered once
// it is committed (group.Group.Sync). v3+ carry group.instance.id, v5+ the
// protocol type and name, checked against the group's
// (INCONSISTENT_GROUP_PROTOCOL) and echoed in the answer.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) syncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	if h.Groups == nil {
		resp.ErrorCode = errorCode(errNoCoordinator)
		return resp, nil
	}
	sr := group.SyncRequest{MemberID: req.MemberID, InstanceID: req.InstanceID, Generation: req.Generation,
		ProtocolType: req.ProtocolType, Protocol: req.Protocol, Assignments: map[string][]byte{}}
	for _, a := range req.GroupAssignment {
		sr.Assignments[a.MemberID] = a.MemberAssignment
	}
	r := h.Groups.Sync(ctx, req.Group, sr)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	resp.ErrorCode = errorCode(r.Err)
	if r.Err == nil {
		resp.MemberAssignment = r.Assignment
		if req.Version >= 5 {
			resp.ProtocolType, resp.Protocol = &r.ProtocolType, &r.Protocol
		}
	}
	return resp, nil
}

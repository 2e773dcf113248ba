package api

// DeleteGroups (key 42), v0–v2.
//
// Deletes Empty groups with their committed offsets (tombstones written to
// __consumer_offsets, answered once committed): NON_EMPTY_GROUP while
// members remain, GROUP_ID_NOT_FOUND for unknown groups, NOT_COORDINATOR
// on another broker.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) deleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		if h.Groups == nil {
			rg.ErrorCode = errorCode(errNoCoordinator)
		} else {
			rg.ErrorCode = errorCode(h.Groups.DeleteGroup(ctx, id))
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

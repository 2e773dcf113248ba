package api

// ListGroups (key 16), v0–v5.
//
// The groups this broker coordinates (clients ask every broker), with
// their protocol type, v4+ their state (filtered by StatesFilter,
// case-insensitive), v5+ their type, always "classic" (TypesFilter keeps
// or drops them all). A partition still loading makes it
// COORDINATOR_LOAD_IN_PROGRESS.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) listGroups(req *kmsg.ListGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	if h.Groups == nil {
		return resp // no coordinator: no groups here
	}
	var states []group.State
	for _, s := range req.StatesFilter {
		st, ok := group.ParseState(s)
		if !ok {
			return resp // a state no group can be in
		}
		states = append(states, st)
	}
	if len(req.TypesFilter) > 0 && !containsFold(req.TypesFilter, "classic") {
		return resp
	}
	gs, err := h.Groups.List(states)
	resp.ErrorCode = errorCode(err)
	for _, g := range gs {
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState, rg.GroupType = g.GroupID, g.ProtocolType, g.State.String(), "classic"
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func containsFold(ss []string, s string) bool {
	for _, x := range ss {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

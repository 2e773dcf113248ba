package api

// DescribeGroups (key 15), v0–v5.
//
// Each group's state, protocol type, and members (client id, host, v4+
// group.instance.id); member metadata, assignments and the protocol only
// when Stable, as Kafka's GroupMetadata.summary. An unknown group is Dead
// with no error, as Kafka answers. Authorized operations (v3+) are not
// computed (INT32_MIN).

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) describeGroups(req *kmsg.DescribeGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.AuthorizedOperations = id, authorizedOpsOmitted
		if h.Groups == nil {
			rg.ErrorCode = errorCode(errNoCoordinator)
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		d, err := h.Groups.Describe(id)
		rg.ErrorCode = errorCode(err)
		if err == nil {
			rg.State, rg.ProtocolType, rg.Protocol = d.State.String(), d.ProtocolType, d.Protocol
			for _, m := range d.Members {
				rm := kmsg.NewDescribeGroupsResponseGroupMember()
				rm.MemberID, rm.InstanceID, rm.ClientID, rm.ClientHost = m.MemberID, m.InstanceID, m.ClientID, m.ClientHost
				rm.ProtocolMetadata, rm.MemberAssignment = m.Metadata, m.Assignment
				rg.Members = append(rg.Members, rm)
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

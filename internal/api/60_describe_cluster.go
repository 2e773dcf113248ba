package api

// DescribeCluster (key 60), v0–v1: the live brokers with the listener the
// request came in on, at their address on it, the controller and the
// cluster id from the metadata cache. v1's EndpointType must be 1 (brokers);
// controller endpoints (2) are a KRaft notion and answer UNSUPPORTED_ENDPOINT_TYPE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) describeCluster(req *kmsg.DescribeClusterRequest, listener string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		return resp
	}
	resp.ClusterID = h.Meta.ClusterID()
	resp.ControllerID = h.Meta.ControllerID()
	resp.ClusterAuthorizedOperations = authorizedOpsOmitted
	for _, b := range h.Meta.BrokersOn(listener) {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = b.ID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp
}

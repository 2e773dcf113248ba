package api

// DescribeAcls, CreateAcls and DeleteAcls (keys 29-31), v0-v3, as a Kafka
// broker without an authorizer (authorizer.class.name unset, Kafka's
// default) answers them: SECURITY_DISABLED, for the request (DescribeAcls)
// or for each creation and each filter. Samsa authorizes nothing (it has
// no authentication to name a principal by), so kafka-acls.sh and admin
// clients learn that ACLs are off instead of failing on a missing API.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's messages (AclApis): the same words, the one for changes with a
// full stop.
const (
	noAuthorizerDescribe = "No Authorizer is configured on the broker"
	noAuthorizerChange   = "No Authorizer is configured."
)

func describeACLs(req *kmsg.DescribeACLsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	resp.ErrorCode = kerr.SecurityDisabled.Code
	resp.ErrorMessage = kmsg.StringPtr(noAuthorizerDescribe)
	return resp
}

func createACLs(req *kmsg.CreateACLsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	for range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizerChange)
		resp.Results = append(resp.Results, r)
	}
	return resp
}

func deleteACLs(req *kmsg.DeleteACLsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizerChange)
		resp.Results = append(resp.Results, r)
	}
	return resp
}

package api

// DescribeUserScramCredentials (key 50), v0 (KIP-554), answered as a Kafka
// broker whose store holds no SCRAM credential answers it: Samsa has no
// SASL, so no user has a credential to describe. All users (a null or
// empty list) is an empty answer; a named user is RESOURCE_NOT_FOUND, and
// a user named more than once DUPLICATE_RESOURCE, once, with Kafka's
// messages. AlterUserScramCredentials (key 51) is not served: ApiVersions
// tells an admin client that credentials cannot be set here, rather than
// storing ones no listener would check. kafka-configs.sh --describe
// --entity-type users asks for both quotas and credentials.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's messages (ScramImage), followed by the user's name.
const (
	scramDuplicateUser = "Cannot describe SCRAM credentials for the same user twice in a single request: "
	scramNoCredential  = "Attempt to describe a user credential that does not exist: "
)

func describeUserSCRAMCredentials(req *kmsg.DescribeUserSCRAMCredentialsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	times := map[string]int{}
	for _, u := range req.Users {
		times[u.Name]++
	}
	for _, u := range req.Users {
		n := times[u.Name]
		if n == 0 { // answered already
			continue
		}
		times[u.Name] = 0
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = u.Name
		if n > 1 {
			r.ErrorCode, r.ErrorMessage = kerr.DuplicateResource.Code, kmsg.StringPtr(scramDuplicateUser+u.Name)
		} else {
			r.ErrorCode, r.ErrorMessage = kerr.ResourceNotFound.Code, kmsg.StringPtr(scramNoCredential+u.Name)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ACL APIs answer as a Kafka broker without an authorizer:
// SECURITY_DISABLED with Kafka's messages, for DescribeAcls once, for
// CreateAcls and DeleteAcls once per creation and per filter, at every
// version served.
func TestACLsSecurityDisabled(t *testing.T) {
	x := newHarness(t)
	for v := int16(0); v <= 3; v++ {
		d := kmsg.NewPtrDescribeACLsRequest()
		d.SetVersion(v)
		dr := x.do(context.Background(), d).(*kmsg.DescribeACLsResponse)
		if dr.ErrorCode != kerr.SecurityDisabled.Code || dr.ErrorMessage == nil || *dr.ErrorMessage != "No Authorizer is configured on the broker" || len(dr.Resources) != 0 {
			t.Fatalf("DescribeAcls v%d: %+v", v, dr)
		}

		c := kmsg.NewPtrCreateACLsRequest()
		c.SetVersion(v)
		c.Creations = make([]kmsg.CreateACLsRequestCreation, 2)
		cr := x.do(context.Background(), c).(*kmsg.CreateACLsResponse)
		if len(cr.Results) != 2 {
			t.Fatalf("CreateAcls v%d: %d results for 2 creations", v, len(cr.Results))
		}
		for _, r := range cr.Results {
			if r.ErrorCode != kerr.SecurityDisabled.Code || r.ErrorMessage == nil || *r.ErrorMessage != "No Authorizer is configured." {
				t.Fatalf("CreateAcls v%d: %+v", v, r)
			}
		}

		del := kmsg.NewPtrDeleteACLsRequest()
		del.SetVersion(v)
		del.Filters = make([]kmsg.DeleteACLsRequestFilter, 3)
		delr := x.do(context.Background(), del).(*kmsg.DeleteACLsResponse)
		if len(delr.Results) != 3 {
			t.Fatalf("DeleteAcls v%d: %d results for 3 filters", v, len(delr.Results))
		}
		for _, r := range delr.Results {
			if r.ErrorCode != kerr.SecurityDisabled.Code || len(r.MatchingACLs) != 0 {
				t.Fatalf("DeleteAcls v%d: %+v", v, r)
			}
		}
	}
}

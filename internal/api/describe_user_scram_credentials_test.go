package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDescribeUserSCRAMCredentials: no user has a credential (Samsa has no
// SASL). All users is an empty answer; each named user is answered once,
// RESOURCE_NOT_FOUND, or DUPLICATE_RESOURCE when named twice, with
// Kafka's messages.
func TestDescribeUserSCRAMCredentials(t *testing.T) {
	x := newHarness(t)
	describe := func(users ...string) *kmsg.DescribeUserSCRAMCredentialsResponse {
		req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		for _, u := range users {
			ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
			ru.Name = u
			req.Users = append(req.Users, ru)
		}
		return x.do(context.Background(), req).(*kmsg.DescribeUserSCRAMCredentialsResponse)
	}
	if r := describe(); r.ErrorCode != 0 || len(r.Results) != 0 {
		t.Fatalf("all users: %+v", r)
	}
	r := describe("alice", "bob", "alice", "carol", "alice")
	var got []string
	for _, res := range r.Results {
		got = append(got, fmt.Sprintf("%s:%s:%s", res.User, kerr.ErrorForCode(res.ErrorCode).(*kerr.Error).Message, *res.ErrorMessage))
	}
	want := []string{
		"alice:DUPLICATE_RESOURCE:Cannot describe SCRAM credentials for the same user twice in a single request: alice",
		"bob:RESOURCE_NOT_FOUND:Attempt to describe a user credential that does not exist: bob",
		"carol:RESOURCE_NOT_FOUND:Attempt to describe a user credential that does not exist: carol",
	}
	if r.ErrorCode != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("named users: top %d\n got %q\nwant %q", r.ErrorCode, got, want)
	}
}

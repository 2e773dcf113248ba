package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// forwardingControl answers AlterPartition and records what it got; the
// other Control methods are not used.
type forwardingControl struct {
	Control
	got *kmsg.AlterPartitionRequest
}

func (c *forwardingControl) AlterPartition(_ context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	c.got = req
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	resp.ErrorCode = 41 // NOT_CONTROLLER
	return resp
}

// AlterPartition is the Control implementation's answer, unchanged.
func TestAlterPartitionForwardsToControl(t *testing.T) {
	ctl := &forwardingControl{}
	h := New(Config{NodeID: self, Control: ctl})
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID = 2, 3
	resp, ok := h.alterPartition(context.Background(), req).(*kmsg.AlterPartitionResponse)
	if !ok || ctl.got != req || resp.ErrorCode != 41 {
		t.Fatalf("forwarded %v, answered %+v", ctl.got == req, resp)
	}
}

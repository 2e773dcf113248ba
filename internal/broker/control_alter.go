package broker

// AlterPartition on a broker (KIP-497): partition leaders send their ISR
// changes to the controller, and the broker that receives one hands it to
// its own controller (controller.Loop.AlterPartition), which answers
// NOT_CONTROLLER unless it is the active one. Unlike the other control
// requests this one is not from the controller, so no controller or broker
// epoch check applies here: the controller checks the requester's broker
// epoch itself.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterPartition forwards req to this broker's controller.
func (c *controlPlane) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	if c.alterPartition == nil {
		resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
		resp.ErrorCode = kerr.NotController.Code
		return resp
	}
	return c.alterPartition(ctx, req)
}

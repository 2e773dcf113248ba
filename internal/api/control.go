package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Control is what a broker does with the controller's requests (Kafka's
// ZooKeeper-era inter-broker control plane). Implementations check the
// controller and broker epochs of every request and answer protocol errors
// in the response; they never close the connection.
type Control interface {
	LeaderAndIsr(ctx context.Context, req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse
	StopReplica(ctx context.Context, req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse
	UpdateMetadata(ctx context.Context, req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse
	// AlterPartition (from partition leaders) is the controller's:
	// NOT_CONTROLLER when this broker is not the active one.
	AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse
	// ControlledShutdown (from a stopping broker) is the controller's too.
	ControlledShutdown(ctx context.Context, req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse
}

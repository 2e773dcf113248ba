package api

// Readiness: a broker answers no request that depends on cluster metadata
// until it has registered and applied the UpdateMetadata its controller
// sent for that registration (Metadata.Ready). Before that its metadata
// cache is empty or stale, and a client would see a cluster without
// brokers, controller or topics.
//
// Such a request waits for readiness, bounded by its own timeout (at least
// minReadyWait, at most maxReadyWait, minReadyWait for requests without
// one); if the broker is still not ready then, the connection is closed,
// which every client treats as retriable (it reconnects, to this broker or
// another). ApiVersions is answered at once, as are the requests brokers
// send each other (the controller's LeaderAndIsr, UpdateMetadata and
// StopReplica, which make the broker ready; AlterPartition and
// ControlledShutdown to the controller; followers' Fetch and
// OffsetForLeaderEpoch).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	minReadyWait = 5 * time.Second
	maxReadyWait = 30 * time.Second
)

// ErrNotReady closes a connection whose request waited out its bound for
// the broker to become ready.
var ErrNotReady = errors.New("api: broker not ready (not registered or not caught up with the controller's metadata)")

// needsReady reports whether req must wait for readiness, and for how long
// at most.
func needsReady(req kmsg.Request) (bool, time.Duration) {
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest, *kmsg.LeaderAndISRRequest, *kmsg.UpdateMetadataRequest,
		*kmsg.StopReplicaRequest, *kmsg.AlterPartitionRequest, *kmsg.ControlledShutdownRequest:
		return false, 0
	case *kmsg.FetchRequest:
		return fetchReplicaID(r) < 0, readyWait(r.MaxWaitMillis)
	case *kmsg.OffsetForLeaderEpochRequest:
		return r.ReplicaID < 0, minReadyWait
	case *kmsg.ProduceRequest:
		return true, readyWait(r.TimeoutMillis)
	case *kmsg.CreateTopicsRequest:
		return true, readyWait(r.TimeoutMillis)
	case *kmsg.DeleteTopicsRequest:
		return true, readyWait(r.TimeoutMillis)
	case *kmsg.CreatePartitionsRequest:
		return true, readyWait(r.TimeoutMillis)
	case *kmsg.ElectLeadersRequest:
		return true, readyWait(r.TimeoutMillis)
	case *kmsg.AlterPartitionAssignmentsRequest:
		return true, readyWait(r.TimeoutMillis)
	}
	return true, minReadyWait
}

func readyWait(timeoutMs int32) time.Duration {
	return min(max(time.Duration(timeoutMs)*time.Millisecond, minReadyWait), maxReadyWait)
}

// awaitReady waits until the broker is ready for req, for at most bound.
func (h *Handler) awaitReady(ctx context.Context, req kmsg.Request, bound time.Duration) error {
	ready := h.Meta.Ready()
	select {
	case <-ready:
		return nil
	default:
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: %s waited %v", ErrNotReady, kmsg.NameForKey(req.Key()), bound)
	}
}

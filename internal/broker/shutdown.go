package broker

// Controlled shutdown, the broker side (Kafka's ZooKeeper-era
// KafkaServer.controlledShutdown). With controlled.shutdown.enable (the
// default), Close first asks the active controller, as the metadata cache
// knows it, to move leadership away from this broker and stop its follower
// replicas (ControlledShutdown with its broker epoch), while the broker
// still serves and replicates; then it deregisters and stops as before.
//
// Up to controlled.shutdown.max.retries attempts are made,
// controlled.shutdown.retry.backoff.ms apart, until the controller answers
// with no partition left to move. When they all fail the shutdown goes on
// unclean (logged), as Kafka's. The whole is bounded by
// controller.socket.timeout.ms (Kafka bounds each attempt by it; one bound
// for all keeps a SIGTERM's exit within it whatever the controller does).
//
// Two departures from Kafka keep tests and `samsa dev` from waiting for
// nothing, without changing what ends up moved:
//   - no retry when no partition left has a replica on another live broker
//     (RF 1, or the last broker standing): no controller can move them, and
//     Kafka would only sleep through its retries;
//   - after an attempt that found no controller to talk to (none known, not
//     reachable, NOT_CONTROLLER, timed out), the backoff ends as soon as the
//     metadata cache names another one — say the controller that stopped
//     just before this broker has been replaced.
//
// The controller side, and what "moved" means, is controller.Loop's
// ControlledShutdown (internal/controller/controlled_shutdown.go); a broker
// serves the request only as the active controller (control.go's
// controlPlane forwards it to its own controller).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var errNoController = errors.New("no controller known")

// ControlledShutdown forwards req to this broker's controller.
func (c *controlPlane) ControlledShutdown(ctx context.Context, req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse {
	if c.controlledShutdown == nil {
		resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
		resp.ErrorCode = kerr.NotController.Code
		return resp
	}
	return c.controlledShutdown(ctx, req)
}

// controlledShutdown runs the attempts; true when the controller answered
// with no partition left to move.
func (b *Broker) controlledShutdown() bool {
	cfg := b.cfg
	if !cfg.ControlledShutdownEnable || cfg.ControlledShutdownRetries <= 0 {
		return false
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ControllerSocketTimeout)
	defer cancel()
	for left := cfg.ControlledShutdownRetries; left > 0 && ctx.Err() == nil; left-- {
		ctrl, remaining, err := b.askControlledShutdown(ctx)
		switch {
		case err == nil && len(remaining) == 0:
			b.log.Info("controlled shutdown succeeded", "controller", ctrl, "took", time.Since(start).Round(time.Microsecond))
			return true
		case err == nil && !b.movable(remaining):
			b.log.Info("controlled shutdown: no partition left has a replica on another live broker; not retrying",
				"controller", ctrl, "remaining", len(remaining), "took", time.Since(start).Round(time.Microsecond))
			return false
		case err == nil:
			b.log.Info("controlled shutdown: partitions remain to move", "controller", ctrl,
				"remaining", len(remaining), "first", remaining[0], "retries_left", left-1)
		default:
			b.log.Info("controlled shutdown attempt failed", "controller", ctrl, "err", err, "retries_left", left-1)
		}
		if left > 1 {
			b.waitRetry(ctx, ctrl, err != nil)
		}
	}
	b.log.Warn("proceeding to an unclean shutdown as all the controlled shutdown attempts failed",
		"took", time.Since(start).Round(time.Millisecond))
	return false
}

// askControlledShutdown makes one attempt: the controller asked, and the
// partitions this broker still leads, or why there is no answer.
func (b *Broker) askControlledShutdown(ctx context.Context) (int32, []kafka.TopicPartition, error) {
	id, addr, ok := b.controllerAddr()
	if !ok {
		return id, nil, errNoController
	}
	cl, err := wire.BrokerClient(addr, fmt.Sprintf("broker-%d-controlled-shutdown", b.nodeID), b.cfg.ControllerSocketTimeout)
	if err != nil {
		return id, nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID, req.BrokerEpoch = b.nodeID, b.cache.BrokerEpoch()
	kresp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return id, nil, err
	}
	resp := kresp.(*kmsg.ControlledShutdownResponse)
	if resp.ErrorCode != 0 {
		return id, nil, kerr.ErrorForCode(resp.ErrorCode)
	}
	remaining := make([]kafka.TopicPartition, 0, len(resp.PartitionsRemaining))
	for _, p := range resp.PartitionsRemaining {
		remaining = append(remaining, kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition})
	}
	return id, remaining, nil
}

// movable: some partition of tps has a replica on another live broker, as
// the metadata cache knows them (a partition it does not know counts).
func (b *Broker) movable(tps []kafka.TopicPartition) bool {
	live := map[int32]bool{}
	for _, br := range b.cache.Brokers() {
		live[br.ID] = br.ID != b.nodeID
	}
	for _, tp := range tps {
		p, ok := b.cache.Partition(tp.Topic, tp.Partition)
		if !ok {
			return true
		}
		for _, r := range p.Replicas {
			if live[r] {
				return true
			}
		}
	}
	return false
}

// waitRetry sleeps controlled.shutdown.retry.backoff.ms (or until ctx
// ends); after a failure to reach controller prev (noAnswer), it also ends
// once the metadata cache names another controller.
func (b *Broker) waitRetry(ctx context.Context, prev int32, noAnswer bool) {
	timer := time.NewTimer(b.cfg.ControlledShutdownBackoff)
	defer timer.Stop()
	for {
		changed := b.cache.Changed()
		if id := b.cache.ControllerID(); noAnswer && id >= 0 && id != prev {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		case <-changed:
		}
	}
}

package broker

// ElectLeaders on a broker (api.Elections), as Kafka's
// ReplicaManager.electLeaders: the election goes to this broker's
// controller (controller.Loop.ElectLeaders, NOT_CONTROLLER unless it is the
// active one), whose answer is waited for whatever the request's timeout
// (as Kafka's controller callback is; the connection closing ends the
// wait); each partition it elected then waits until this broker's
// metadata cache shows the new leader (Kafka's DelayedElectLeader), and
// answers REQUEST_TIMED_OUT if the request's timeout passes first.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/controller"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/quota"
)

type leaderElections struct {
	loop  *controller.Loop
	cache *metacache.Cache
}

func (e *leaderElections) ElectLeaders(ctx context.Context, timeout time.Duration, typ int8, parts []kafka.TopicPartition) []api.ElectionResult {
	results := e.loop.ElectLeaders(ctx, controller.ElectionType(typ), parts)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	waiting := map[controller.TP]int32{}
	for _, r := range results {
		if r.Code == 0 {
			waiting[r.TP] = r.Leader
		}
	}
	e.waitLeaders(ctx, waiting)
	out := make([]api.ElectionResult, len(results))
	for i, r := range results {
		out[i] = api.ElectionResult{Partition: r.TP, Code: r.Code}
		if _, late := waiting[r.TP]; late {
			out[i].Code = kerr.RequestTimedOut.Code
		}
		if r.Message != "" {
			msg := r.Message
			out[i].Message = &msg
		}
	}
	return out
}

// waitLeaders removes partitions from waiting as the metadata cache shows
// their expected leader, until none is left or ctx ends: not the
// request's time (quota.Parked; Kafka's DelayedElectLeader).
func (e *leaderElections) waitLeaders(ctx context.Context, waiting map[controller.TP]int32) {
	defer quota.Parked(ctx)()
	for len(waiting) > 0 {
		changed := e.cache.Changed()
		for tp, leader := range waiting {
			if p, ok := e.cache.Partition(tp.Topic, tp.Partition); ok && p.Leader == leader {
				delete(waiting, tp)
			}
		}
		if len(waiting) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

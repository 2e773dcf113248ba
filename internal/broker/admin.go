package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/controller"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/quota"
)

// clusterAdmin serves topic administration (api.Admin) through the store,
// as Kafka's AdminManager does through ZooKeeper: CreateTopics and
// DeleteTopics are the controller's (NOT_CONTROLLER elsewhere); they write
// the topic's keys or deletion marker and wait until this broker's metadata
// cache shows the result, or the request's deadline passes.
type clusterAdmin struct {
	md    *metadata.Client
	ctrl  *controller.Controller
	cache *metacache.Cache
	store metastore.Store
}

// TopicConfig reads the topic's overrides from the store (api.Admin).
func (a *clusterAdmin) TopicConfig(ctx context.Context, topic string) (map[string]string, error) {
	return storeTopicConfig(ctx, a.store, topic)
}

func (a *clusterAdmin) CreateTopic(ctx context.Context, ct api.CreateTopic, validateOnly bool) (api.TopicInfo, error) {
	if !a.ctrl.IsActive() {
		return api.TopicInfo{}, kerr.NotController
	}
	info, assignment, err := a.plan(ct)
	if err != nil || validateOnly {
		return info, err
	}
	if err := a.write(ctx, ct, info, assignment); err != nil {
		return info, err
	}
	err = a.waitFor(ctx, fmt.Sprintf("topic %q created, leaders not yet elected", ct.Name), func() bool {
		t, ok := a.cache.Topic(ct.Name)
		if !ok || t.ID != info.ID || len(t.Partitions) != int(ct.NumPartitions) {
			return false
		}
		for _, p := range t.Partitions {
			if p.Leader < 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		return info, err
	}
	t, _ := a.cache.Topic(ct.Name)
	return t, nil
}

// AutoCreateTopic writes a topic without waiting; any broker may (Kafka's
// auto-creation from Metadata requests).
func (a *clusterAdmin) AutoCreateTopic(ctx context.Context, ct api.CreateTopic) error {
	info, assignment, err := a.plan(ct)
	if err != nil {
		return err
	}
	return a.write(ctx, ct, info, assignment)
}

func (a *clusterAdmin) plan(ct api.CreateTopic) (api.TopicInfo, map[int32][]int32, error) {
	info := api.TopicInfo{Name: ct.Name, ID: uuid.New(), Configs: ct.Configs}
	assignment := ct.Assignment
	if assignment == nil {
		var err error
		if assignment, err = a.assign(int(ct.NumPartitions), int(ct.ReplicationFactor)); err != nil {
			return info, nil, err
		}
	}
	for p := range int32(len(assignment)) {
		info.Partitions = append(info.Partitions, api.PartitionInfo{ID: p, Leader: -1, Replicas: assignment[p]})
	}
	return info, assignment, nil
}

// assign places replicas on the live brokers the Kafka way: rack-aware
// when every broker has broker.rack, rack-unaware when none has; a mix is
// refused, as Kafka's default (enforced) rack-aware mode does.
func (a *clusterAdmin) assign(partitions, rf int) (map[int32][]int32, error) {
	var ids []int32
	racks := map[int32]string{}
	for _, b := range a.cache.Brokers() {
		ids = append(ids, b.ID)
		if b.Rack != nil {
			racks[b.ID] = *b.Rack
		}
	}
	var out map[int32][]int32
	var err error
	switch len(racks) {
	case 0:
		out, err = metadata.AssignReplicas(ids, partitions, rf, 0, -1, -1, nil)
	case len(ids):
		out, err = metadata.AssignReplicasRackAware(racks, partitions, rf, 0, -1, -1, nil)
	default:
		return nil, fmt.Errorf("%w: %v", kerr.InvalidReplicaAssignment, metadata.ErrMixedRacks)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kerr.InvalidReplicationFactor, err)
	}
	return out, nil
}

func (a *clusterAdmin) write(ctx context.Context, ct api.CreateTopic, info api.TopicInfo, assignment map[int32][]int32) error {
	err := a.md.CreateTopic(ctx, ct.Name, metadata.Assignment{TopicID: info.ID, Partitions: assignment}, ct.Configs)
	if errors.Is(err, metadata.ErrTopicExists) {
		return fmt.Errorf("%w: Topic '%s' already exists.", kerr.TopicAlreadyExists, ct.Name)
	}
	return err
}

func (a *clusterAdmin) DeleteTopic(ctx context.Context, name string) error {
	if !a.ctrl.IsActive() {
		return kerr.NotController
	}
	before, _ := a.cache.Topic(name)
	if err := a.md.MarkTopicForDeletion(ctx, name); err != nil {
		return err
	}
	return a.waitFor(ctx, fmt.Sprintf("deletion of %q is still in progress", name), func() bool {
		t, ok := a.cache.Topic(name)
		return !ok || t.ID != before.ID
	})
}

// waitFor re-checks cond at every metadata change until it holds; when ctx
// ends first it is REQUEST_TIMED_OUT (what says what was still pending). A
// resignation meanwhile ends the wait with NOT_CONTROLLER, as Kafka answers
// a controller's pending requests. The wait is not the request's time
// (quota.Parked; Kafka's DelayedCreatePartitions, DelayedDeleteTopics).
func (a *clusterAdmin) waitFor(ctx context.Context, what string, cond func() bool) error {
	defer quota.Parked(ctx)()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ch := a.cache.Changed()
		if cond() {
			return nil
		}
		if !a.ctrl.IsActive() {
			return kerr.NotController
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s", kerr.RequestTimedOut, what)
		case <-ch:
		case <-tick.C:
		}
	}
}

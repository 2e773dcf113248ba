package controller

// Hot standby (DESIGN §6). Every controller, active or not, follows the
// whole store through one watch whose changes reach the loop as storeChange
// events. An inactive controller keeps them in a warm Context; when it wins
// the election it waits until its own /controller write has come back
// through that watch — so the warm copy holds every change up to its
// election — and fails over from it without reading the world again. An
// active controller uses the same changes to notice brokers, topics and
// deletion markers (Kafka's watches), and folds in its own writes' echoes
// only when they are newer than what it holds.

import (
	"context"
	"strings"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// storeChange carries store changes in revision order; snapshot replaces
// everything known with kvs.
type storeChange struct {
	snapshot bool
	kvs      []metastore.KV
	events   []metastore.Event
	revision int64
}

func (storeChange) name() string { return "StoreChange" }

// onStoreChange folds changes into the warm (or active) context, then runs
// the handlers Kafka's watches would trigger. An active controller first
// makes sure it still is one when /controller changed: a deposed one
// resigns before acting on anything else, and the rest folds into its
// warm context (Kafka handles a ControllerChange in queue order, ahead of
// the events behind it).
func (c *Controller) onStoreChange(ctx context.Context, sc storeChange) error {
	controllerChanged := sc.touches(metadata.ControllerKey)
	if c.ctx != nil && controllerChanged {
		controllerChanged = false
		if err := c.onControllerChange(ctx); err != nil {
			return err
		}
	}
	wasUnclean := c.brokerUnclean()
	events := sc.events
	if sc.snapshot {
		events = c.startOver(sc.kvs)
	}
	changed := c.fold(events)
	if len(c.deletedAt) > 0 {
		reached := sc.revision // a snapshot's: what it holds is as of then
		if !sc.snapshot {
			// A watch response's revision may run ahead of its events
			// while the watch catches up; theirs do not.
			reached = 0
			for _, ev := range sc.events {
				reached = max(reached, ev.KV.Version)
			}
		}
		defer c.forgetDeletions(reached)
	}
	changed.uncleanEnabled = !wasUnclean && c.brokerUnclean()
	if c.ctx == nil {
		c.warmRev = sc.revision
		c.warm.liveBrokers = c.warm.registered
	}
	if c.ctx != nil {
		if err := c.onWatchedChanges(ctx, changed); err != nil {
			return err
		}
	}
	if controllerChanged && c.pendingFailover == 0 {
		if err := c.onControllerChange(ctx); err != nil {
			return err
		}
	}
	if c.pendingFailover > 0 && c.warmRev >= c.pendingFailover {
		return c.failover(ctx)
	}
	return nil
}

// touches reports whether the change writes or deletes key.
func (sc storeChange) touches(key string) bool {
	for _, kv := range sc.kvs {
		if kv.Key == key {
			return true
		}
	}
	for _, ev := range sc.events {
		if ev.KV.Key == key {
			return true
		}
	}
	return false
}

// startOver prepares for a snapshot, which replaces everything known with
// its keys, and returns them as puts. A standby starts a new warm context;
// an active controller keeps its own, whose topics and deletions it
// drives, and relearns only what others write: registrations (a broker
// gone while the watch was broken is gone), topic and broker configs.
func (c *Controller) startOver(kvs []metastore.KV) []metastore.Event {
	if c.ctx == nil {
		c.warm = newContext()
		c.deleting = map[string]bool{}
	} else {
		c.ctx.registered = map[int32]metadata.Broker{}
	}
	c.unclean = map[string]bool{}
	c.uncleanDefault, c.uncleanOwn = nil, nil
	events := make([]metastore.Event, len(kvs))
	for i, kv := range kvs {
		events[i] = metastore.Event{Type: metastore.EventPut, KV: kv}
	}
	return events
}

// watched is what a change touched that an active controller acts on.
type watched struct {
	brokers, markers bool
	topicPuts        []metastore.KV // assignment writes
	uncleanEnabled   bool           // the broker-level unclean.leader.election.enable turned true
}

// fold applies events to the active context, else to the warm one.
func (c *Controller) fold(events []metastore.Event) watched {
	cx := c.ctx
	if cx == nil {
		cx = c.warm
	}
	var w watched
	for _, ev := range events {
		key := ev.KV.Key
		switch {
		case strings.HasPrefix(key, metadata.BrokerIDsPrefix):
			w.brokers = true
			c.applyBroker(cx, ev)
		case strings.HasPrefix(key, metadata.TopicsPrefix):
			if t := c.applyTopicsEvent(cx, ev); t != nil {
				w.topicPuts = append(w.topicPuts, *t)
			}
		case strings.HasPrefix(key, metadata.TopicConfigsPrefix):
			if ev.Type == metastore.EventPut && c.ctx != nil && c.staleForDeleted(key[len(metadata.TopicConfigsPrefix):], ev.KV.Version) {
				continue
			}
			if ev.Type == metastore.EventPut {
				c.applyTopicConfig(ev.KV)
			} else {
				delete(c.unclean, key[len(metadata.TopicConfigsPrefix):])
			}
		case strings.HasPrefix(key, metadata.BrokerConfigsPrefix):
			c.applyBrokerConfig(ev)
		case strings.HasPrefix(key, metadata.DeleteTopicsPrefix):
			w.markers = true
			if c.ctx == nil {
				topic := key[len(metadata.DeleteTopicsPrefix):]
				if ev.Type == metastore.EventPut {
					c.deleting[topic] = true
				} else {
					delete(c.deleting, topic)
				}
			}
		}
	}
	return w
}

// onWatchedChanges runs the active controller's handlers of Kafka's
// watches: broker changes, topic changes, unclean election enabled,
// deletion markers.
func (c *Controller) onWatchedChanges(ctx context.Context, w watched) error {
	if w.brokers {
		if err := c.brokersChanged(ctx, c.ctx.registeredList()); err != nil {
			return err
		}
	}
	if len(w.topicPuts) > 0 {
		if err := c.onTopicChange(ctx, w.topicPuts); err != nil {
			return err
		}
	}
	if w.uncleanEnabled {
		if err := c.onUncleanEnabled(ctx); err != nil {
			return err
		}
	}
	if w.markers {
		return c.onDeleteTopics(ctx)
	}
	return nil
}

func (c *Controller) applyBroker(cx *Context, ev metastore.Event) {
	id, ok := metadata.ParseBrokerKey(ev.KV.Key)
	if !ok {
		return
	}
	if ev.Type == metastore.EventDelete {
		delete(cx.registered, id)
		return
	}
	b, err := metadata.DecodeBroker(ev.KV)
	if err != nil {
		c.cfg.Logger.Warn("bad broker registration", "key", ev.KV.Key, "err", err)
		return
	}
	cx.registered[id] = b
}

// applyTopicsEvent folds an assignment or partition-state change into cx.
// An active controller handles assignment writes itself: they are returned.
func (c *Controller) applyTopicsEvent(cx *Context, ev metastore.Event) *metastore.KV {
	topic, chunk, ok := metadata.ParseTopicsKey(ev.KV.Key)
	if !ok {
		return nil
	}
	if c.ctx != nil && ev.Type == metastore.EventPut && c.staleForDeleted(topic, ev.KV.Version) {
		if chunk < 0 {
			c.cfg.Logger.Info("ignoring an assignment written before this controller deleted its topic", "topic", topic, "version", ev.KV.Version)
		}
		return nil
	}
	if chunk >= 0 {
		id := chunkID{topic, chunk}
		if max(cx.chunkVer[id], cx.pending.version(id)) >= ev.KV.Version {
			return nil // an echo of something we already hold, or older
		}
		switch {
		case ev.Type == metastore.EventDelete:
			cx.pending.drop(id)
			cx.replaceChunk(id, nil, 0)
		case c.ctx == nil && c.mirroring:
			cx.pending.put(id, ev.KV.Value, ev.KV.Version) // decoded soon (warmchunks.go)
		default:
			c.applyChunk(cx, id, ev.KV)
		}
		return nil
	}
	if c.ctx != nil {
		if ev.Type == metastore.EventPut {
			kv := ev.KV
			return &kv
		}
		return nil
	}
	if ev.Type == metastore.EventDelete {
		cx.delTopic(topic)
		return nil
	}
	a, err := metadata.DecodeDenseAssignment(ev.KV.Value)
	if err != nil {
		c.cfg.Logger.Warn("bad topic assignment", "topic", topic, "err", err)
		return nil
	}
	cx.setTopic(topic, newTopicInfo(a, ev.KV.Version))
	return nil
}

// applyChunk decodes a state chunk into cx.
func (c *Controller) applyChunk(cx *Context, id chunkID, kv metastore.KV) {
	es, err := metadata.DecodeStateChunk(kv.Value)
	if err != nil {
		c.cfg.Logger.Warn("bad partition states", "key", kv.Key, "err", err)
		return
	}
	cx.replaceChunk(id, es, kv.Version)
}

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
// the handlers Kafka's watches would trigger.
func (c *Controller) onStoreChange(ctx context.Context, sc storeChange) error {
	events := sc.events
	if sc.snapshot {
		c.warm = newContext()
		c.deleting, c.unclean = map[string]bool{}, map[string]bool{}
		events = make([]metastore.Event, len(sc.kvs))
		for i, kv := range sc.kvs {
			events[i] = metastore.Event{Type: metastore.EventPut, KV: kv}
		}
	}
	cx := c.ctx
	if cx == nil {
		cx = c.warm
	}
	var brokersChanged, controllerChanged, markersChanged bool
	var topicPuts []metastore.KV
	for _, ev := range events {
		key := ev.KV.Key
		switch {
		case key == metadata.ControllerKey:
			controllerChanged = true
		case strings.HasPrefix(key, metadata.BrokerIDsPrefix):
			brokersChanged = true
			c.applyBroker(cx, ev)
		case strings.HasPrefix(key, metadata.TopicsPrefix):
			if t := c.applyTopicsEvent(cx, ev); t != nil {
				topicPuts = append(topicPuts, *t)
			}
		case strings.HasPrefix(key, metadata.TopicConfigsPrefix):
			if ev.Type == metastore.EventPut {
				c.applyTopicConfig(ev.KV)
			} else {
				delete(c.unclean, key[len(metadata.TopicConfigsPrefix):])
			}
		case strings.HasPrefix(key, metadata.DeleteTopicsPrefix):
			markersChanged = true
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
	if c.ctx == nil {
		c.warmRev = sc.revision
		c.warm.liveBrokers = c.warm.registered
	}
	if c.ctx != nil {
		if brokersChanged {
			if err := c.brokersChanged(ctx, c.ctx.registeredList()); err != nil {
				return err
			}
		}
		if len(topicPuts) > 0 {
			if err := c.onTopicChange(ctx, topicPuts); err != nil {
				return err
			}
		}
		if markersChanged {
			if err := c.onDeleteTopics(ctx); err != nil {
				return err
			}
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

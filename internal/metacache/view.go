package metacache

import (
	"maps"
	"slices"

	"github.com/samsa-kafka/samsa/internal/api"
)

var _ api.Metadata = (*Cache)(nil)

// ClusterID returns the cluster id.
func (c *Cache) ClusterID() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.clusterID
}

// ControllerID returns the controller of the last valid request, -1 if none.
func (c *Cache) ControllerID() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.controllerID
}

// Brokers returns every live broker, sorted by id, at its address on the
// listener SetListenerName chose (Host "" and Port -1 for a broker without
// that listener).
func (c *Cache) Brokers() []api.BrokerInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]api.BrokerInfo, 0, len(c.brokers))
	for i := range c.brokers {
		b := &c.brokers[i]
		host, port, _ := endpointOn(b, c.listener)
		out = append(out, api.BrokerInfo{ID: b.ID, Host: host, Port: port, Rack: b.Rack})
	}
	return out
}

// BrokersOn returns the live brokers that have listener, sorted by id, at
// their address on it (Kafka's getAliveBrokerNodes(listenerName)).
func (c *Cache) BrokersOn(listener string) []api.BrokerInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]api.BrokerInfo, 0, len(c.brokers))
	for i := range c.brokers {
		b := &c.brokers[i]
		if host, port, ok := endpointOn(b, listener); ok && listener != "" {
			out = append(out, api.BrokerInfo{ID: b.ID, Host: host, Port: port, Rack: b.Rack})
		}
	}
	return out
}

// Deleting reports a topic under deletion; the cache does not know (the
// controller's UpdateMetadata removes such topics), so it is always false.
func (c *Cache) Deleting(string) bool { return false }

// Partition returns one partition's state.
func (c *Cache) Partition(name string, p int32) (api.PartitionInfo, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.topics[name]
	if t == nil {
		return api.PartitionInfo{}, false
	}
	return t.get(p)
}

// Topics returns every topic sorted by name. The slice is shared until the
// next change: callers must not modify it.
func (c *Cache) Topics() []api.TopicInfo {
	c.mu.RLock()
	list, ok := c.list, c.listOK
	c.mu.RUnlock()
	if ok {
		return list
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listOK {
		names := slices.Sorted(maps.Keys(c.topics))
		c.list = make([]api.TopicInfo, len(names))
		for i, n := range names {
			c.list[i] = *c.infoLocked(n, c.topics[n])
		}
		c.listOK = true
	}
	return c.list
}

// Topic returns one topic (shared: callers must not modify it).
func (c *Cache) Topic(name string) (api.TopicInfo, bool) {
	c.mu.RLock()
	t := c.topics[name]
	var info *api.TopicInfo
	if t != nil {
		info = t.info
	}
	c.mu.RUnlock()
	if t == nil {
		return api.TopicInfo{}, false
	}
	if info != nil {
		return *info, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t = c.topics[name]; t == nil { // removed meanwhile
		return api.TopicInfo{}, false
	}
	return *c.infoLocked(name, t), true
}

// TopicByID returns the topic with that id.
func (c *Cache) TopicByID(id [16]byte) (api.TopicInfo, bool) {
	c.mu.RLock()
	name, ok := c.byID[id]
	c.mu.RUnlock()
	if !ok {
		return api.TopicInfo{}, false
	}
	t, ok := c.Topic(name)
	if !ok || t.ID != id { // re-created meanwhile
		return api.TopicInfo{}, false
	}
	return t, true
}

// infoLocked returns t's TopicInfo, building it if a change invalidated it.
// Caller holds the write lock.
func (c *Cache) infoLocked(name string, t *topic) *api.TopicInfo {
	if t.info != nil {
		return t.info
	}
	info := &api.TopicInfo{Name: name, ID: t.id, Internal: isInternal(name),
		Configs: c.configs[name], Partitions: t.partitions()}
	t.info = info
	return info
}

// isInternal names Kafka's internal topics.
func isInternal(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

package metacache

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/kafka"
)

// unknownBrokerEpoch in a request skips the broker epoch check (a controller
// predating KIP-380).
const unknownBrokerEpoch = -1

// Cache is the broker's metadata cache.
type Cache struct {
	nodeID int32

	mu          sync.RWMutex
	clusterID   string
	listener    string
	brokerEpoch int64
	// staleUpTo: broker epochs up to it belong to registrations made
	// before this process started (SetStaleUpTo).
	staleUpTo       int64
	controllerID    int32
	controllerEpoch int32
	brokers         []kmsg.UpdateMetadataRequestLiveBroker // sorted by id
	topics          map[string]*topic
	byID            map[[16]byte]string
	configs         map[string]map[string]string
	changed         chan struct{}
	list            []api.TopicInfo // built lazily, valid when listOK
	listOK          bool
	rd              readiness // ready.go

	// Read without mu on every client request (ready.go).
	readyCh  atomic.Pointer[chan struct{}] // rd.ch as of its last change
	st       atomic.Pointer[stall]
	lastBeat atomic.Int64 // st.now() at the last beat
}

// New returns an empty cache for broker nodeID: no controller, no brokers,
// no topics.
func New(nodeID int32) *Cache {
	c := &Cache{
		nodeID: nodeID, controllerID: -1,
		topics: map[string]*topic{}, byID: map[[16]byte]string{},
		configs: map[string]map[string]string{}, changed: make(chan struct{}),
		rd: readiness{need: math.MaxInt64},
	}
	c.newReadyChLocked()
	return c
}

// changedLocked invalidates the topic list and wakes Changed waiters.
func (c *Cache) changedLocked() {
	c.list, c.listOK = nil, false
	close(c.changed)
	c.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of the cache.
func (c *Cache) Changed() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.changed
}

// SetClusterID sets the id Metadata answers with.
func (c *Cache) SetClusterID(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clusterID = id
	c.changedLocked()
}

// SetListenerName picks the endpoint of each live broker Brokers gives:
// the inter-broker listener's (UpdateMetadata carries one per listener).
// Empty: the first one.
func (c *Cache) SetListenerName(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listener = name
}

// SetBrokerEpoch records this broker's epoch (the creation revision of its
// registration): the broker has registered, and becomes ready once an
// UpdateMetadata for this epoch is applied (ready.go).
func (c *Cache) SetBrokerEpoch(e int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.brokerEpoch = e
	c.registeredLocked(e)
}

// SetStaleUpTo marks every broker epoch up to rev (a store revision read
// before this process first registers) as stale: a controller request
// addressed to the broker's previous life, still registered while its
// session runs out, is refused with STALE_BROKER_EPOCH, as Kafka refuses it
// by processing no request before registering. Epochs above rev, those of
// this process's registration, are accepted even before SetBrokerEpoch
// (the controller may learn the epoch first).
func (c *Cache) SetStaleUpTo(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.staleUpTo = rev
}

// BrokerEpoch returns this broker's epoch.
func (c *Cache) BrokerEpoch() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.brokerEpoch
}

// ControllerEpoch returns the highest controller epoch accepted.
func (c *Cache) ControllerEpoch() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.controllerEpoch
}

// CheckEpochs applies Kafka's checks to a controller request and returns
// its error code, 0 when the request may be applied:
//   - STALE_BROKER_EPOCH when brokerEpoch is older than this broker's (-1
//     skips the check; a newer one is accepted, as Kafka does: the
//     controller may learn the epoch before the broker does);
//   - STALE_CONTROLLER_EPOCH when controllerEpoch is below the highest seen.
//
// A valid request's controller epoch and id are remembered.
func (c *Cache) CheckEpochs(controllerID, controllerEpoch int32, brokerEpoch int64) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checkEpochsLocked(controllerID, controllerEpoch, brokerEpoch)
}

func (c *Cache) checkEpochsLocked(controllerID, controllerEpoch int32, brokerEpoch int64) int16 {
	if brokerEpoch != unknownBrokerEpoch && (brokerEpoch < c.brokerEpoch || brokerEpoch <= c.staleUpTo) {
		return kerr.StaleBrokerEpoch.Code
	}
	if controllerEpoch < c.controllerEpoch {
		return kerr.StaleControllerEpoch.Code
	}
	c.controllerEpoch = controllerEpoch
	if controllerID < 0 {
		controllerID = -1
	}
	if controllerID != c.controllerID {
		c.controllerID = controllerID
		c.changedLocked()
	}
	return 0
}

// ApplyUpdateMetadata checks the request's epochs, then replaces the live
// brokers and upserts its partition states; a partition led by -2 is
// removed, and a topic left without partitions with it. A topic arriving
// with a different non-zero id is a re-created topic: its old partitions are
// dropped first. Returns the error code (0 when applied).
//
// A full snapshot (KIP-866's Type, kafka.IsFullUpdateMetadata: what the
// controller sends a broker at its registration, before anything else, and
// every live broker at a failover) drops the topics it does not list, as
// Kafka's ZkMetadataCache does with a FULL request, even when it lists
// none. They were deleted while this broker was not registered, when the
// controller's UpdateMetadata with leader -2 went to the live brokers
// only.
func (c *Cache) ApplyUpdateMetadata(req *kmsg.UpdateMetadataRequest) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if code := c.checkEpochsLocked(req.ControllerID, req.ControllerEpoch, req.BrokerEpoch); code != 0 {
		return code
	}
	c.brokers = c.liveBrokers(req.LiveBrokers)
	if kafka.IsFullUpdateMetadata(req) {
		c.keepOnly(req.TopicStates)
	}
	for _, ts := range req.TopicStates {
		// The topic is looked up once for all its partitions: applyPartition
		// returns what c.topics holds for it after each.
		var t *topic
		for i := range ts.PartitionStates {
			t = c.applyPartition(t, i > 0, ts.Topic, ts.TopicID, &ts.PartitionStates[i], ts.PartitionStates[i:])
		}
	}
	c.changedLocked()
	c.appliedLocked(req.BrokerEpoch)
	return 0
}

// applyPartition upserts or removes one partition and returns the topic
// c.topics then holds under name; t is what it held before, if known (else
// it is looked up). rest is ps and the topic's partitions after it in the
// request: a new topic is sized for them, and their replica lists take one
// allocation.
func (c *Cache) applyPartition(t *topic, known bool, name string, id [16]byte, ps *kmsg.UpdateMetadataRequestTopicPartition, rest []kmsg.UpdateMetadataRequestTopicPartition) *topic {
	if !known {
		t = c.topics[name]
	}
	if ps.Leader == kafka.LeaderDuringDelete {
		if t != nil {
			t.remove(ps.Partition)
			if t.parts.Len() == 0 {
				c.removeTopic(name)
				return nil
			}
		}
		return t
	}
	if t != nil && id != ([16]byte{}) && t.id != ([16]byte{}) && t.id != id {
		c.removeTopic(name) // re-created under the same name
		t = nil
	}
	if t == nil {
		t = newTopic(len(rest))
		c.topics[name] = t
		t.reserveLists(rest)
	} else if !known {
		t.reserveLists(rest)
	}
	if id != ([16]byte{}) && t.id != id {
		t.id = id
		c.byID[id] = name
	}
	t.put(t.partitionInfo(ps))
	return t
}

// keepOnly drops the topics that ts does not list.
func (c *Cache) keepOnly(ts []kmsg.UpdateMetadataRequestTopicState) {
	listed := make(map[string]bool, len(ts))
	for i := range ts {
		listed[ts[i].Topic] = true
	}
	for name := range c.topics {
		if !listed[name] {
			c.removeTopic(name)
		}
	}
}

func (c *Cache) removeTopic(name string) {
	if t := c.topics[name]; t != nil && c.byID[t.id] == name {
		delete(c.byID, t.id)
	}
	delete(c.topics, name)
}

// liveBrokers keeps the request's brokers, with every endpoint, sorted by
// id: each listener lists the brokers that have it (BrokersOn), as Kafka's
// ZkMetadataCache.
func (c *Cache) liveBrokers(in []kmsg.UpdateMetadataRequestLiveBroker) []kmsg.UpdateMetadataRequestLiveBroker {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b kmsg.UpdateMetadataRequestLiveBroker) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// endpointOn returns b's address on listener ("" : its first endpoint).
func endpointOn(b *kmsg.UpdateMetadataRequestLiveBroker, listener string) (string, int32, bool) {
	for _, e := range b.Endpoints {
		if listener == "" || e.ListenerName == listener {
			return e.Host, e.Port, true
		}
	}
	return "", -1, false
}

// SetTopicConfig records a topic's config overrides (from the store's
// /config/topics/<topic>); nil deletes them.
func (c *Cache) SetTopicConfig(name string, cfg map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg == nil {
		delete(c.configs, name)
	} else {
		c.configs[name] = cfg
	}
	if t := c.topics[name]; t != nil {
		t.info = nil // the partitions did not change: the new info may share them too
	}
	c.changedLocked()
}

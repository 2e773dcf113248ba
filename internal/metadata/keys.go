package metadata

import (
	"strconv"
	"strings"
)

// Key names, mirroring Kafka's znodes.
const (
	ControllerKey      = "/controller"
	ControllerEpochKey = "/controller_epoch"
	ClusterIDKey       = "/cluster/id"
	BrokerIDsPrefix    = "/brokers/ids/"
	TopicsPrefix       = "/brokers/topics/"
	DeleteTopicsPrefix = "/admin/delete_topics/"
	ReassignKey        = "/admin/reassign_partitions"
	TopicConfigsPrefix = "/config/topics/"
	// ProducerIDBlockKey holds the last producer id block a broker
	// claimed (producerids.go).
	ProducerIDBlockKey = "/latest_producer_id_block"
)

// BrokerKey is /brokers/ids/<id>.
func BrokerKey(id int32) string { return BrokerIDsPrefix + strconv.Itoa(int(id)) }

// TopicKey is /brokers/topics/<topic>.
func TopicKey(topic string) string { return TopicsPrefix + topic }

// StateChunkKey is /brokers/topics/<topic>/states/<chunk>: the states of
// partitions [chunk*StateChunkSize, (chunk+1)*StateChunkSize).
func StateChunkKey(topic string, chunk int32) string {
	return TopicsPrefix + topic + "/states/" + strconv.Itoa(int(chunk))
}

// StateChunksPrefix is the prefix of every state chunk key of topic.
func StateChunksPrefix(topic string) string { return TopicsPrefix + topic + "/states/" }

// DeleteTopicKey is /admin/delete_topics/<topic>.
func DeleteTopicKey(topic string) string { return DeleteTopicsPrefix + topic }

// TopicConfigKey is /config/topics/<topic>.
func TopicConfigKey(topic string) string { return TopicConfigsPrefix + topic }

// ParseTopicsKey splits a key under TopicsPrefix: a topic key gives
// (topic, -1, true); a state chunk key gives (topic, chunk, true).
func ParseTopicsKey(key string) (topic string, chunk int32, ok bool) {
	rest, found := strings.CutPrefix(key, TopicsPrefix)
	if !found || rest == "" {
		return "", 0, false
	}
	topic, tail, hasTail := strings.Cut(rest, "/")
	if !hasTail {
		return topic, -1, true
	}
	cs, found := strings.CutPrefix(tail, "states/")
	if !found {
		return "", 0, false
	}
	n, err := strconv.ParseInt(cs, 10, 32)
	if err != nil || n < 0 || strconv.Itoa(int(n)) != cs {
		return "", 0, false
	}
	return topic, int32(n), true
}

// ParseBrokerKey gives the id of a /brokers/ids/<id> key.
func ParseBrokerKey(key string) (int32, bool) {
	rest, found := strings.CutPrefix(key, BrokerIDsPrefix)
	if !found {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 32)
	return int32(id), err == nil && id >= 0
}

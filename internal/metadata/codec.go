package metadata

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Broker is a /brokers/ids/<id> document (Kafka's version 5 layout): every
// advertised listener in endpoints, with its security protocol in
// listener_security_protocol_map; host and port repeat the first endpoint
// whose security protocol is PLAINTEXT (null and -1 without one), as Kafka's
// KafkaZkClient.registerBroker writes them for old readers.
type Broker struct {
	ID        int32             `json:"-"`
	Epoch     int64             `json:"-"` // creation revision of the key
	Host      *string           `json:"host"`
	Port      int32             `json:"port"`
	Endpoints []string          `json:"endpoints"`
	Protocols map[string]string `json:"listener_security_protocol_map"`
	Rack      *string           `json:"rack,omitempty"`
	JMXPort   int               `json:"jmx_port"`
	Timestamp string            `json:"timestamp"`
	Version   int               `json:"version"`
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener string // listener name, upper case
	Host     string
	Port     int32
	Protocol string // security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
}

// String is the NAME://host:port form of the endpoints list.
func (e Endpoint) String() string {
	return e.Listener + "://" + net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// NewBroker describes a broker reachable on endpoints, its advertised
// listeners in the order configured.
func NewBroker(id int32, endpoints []Endpoint, rack string, now time.Time) Broker {
	b := Broker{ID: id, Port: -1, JMXPort: -1, Version: 5, Endpoints: make([]string, 0, len(endpoints)),
		Protocols: make(map[string]string, len(endpoints)), Timestamp: strconv.FormatInt(now.UnixMilli(), 10)}
	for _, e := range endpoints {
		b.Endpoints = append(b.Endpoints, e.String())
		b.Protocols[e.Listener] = e.Protocol
		if b.Host == nil && e.Protocol == "PLAINTEXT" {
			host := e.Host
			b.Host, b.Port = &host, e.Port
		}
	}
	if rack != "" {
		b.Rack = &rack
	}
	return b
}

// EndpointList parses the broker's endpoints, in the document's order;
// entries that do not parse are left out.
func (b Broker) EndpointList() []Endpoint {
	out := make([]Endpoint, 0, len(b.Endpoints))
	for _, s := range b.Endpoints {
		if e, ok := b.parseEndpoint(s); ok {
			out = append(out, e)
		}
	}
	return out
}

// Endpoint returns the broker's endpoint on listener.
func (b Broker) Endpoint(listener string) (Endpoint, bool) {
	for _, s := range b.Endpoints {
		if name, _, _ := strings.Cut(s, "://"); name == listener {
			return b.parseEndpoint(s)
		}
	}
	return Endpoint{}, false
}

// parseEndpoint reads NAME://host:port, the protocol from the document's
// map.
func (b Broker) parseEndpoint(s string) (Endpoint, bool) {
	name, addr, ok := strings.Cut(s, "://")
	if !ok {
		return Endpoint{}, false
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return Endpoint{}, false
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil {
		return Endpoint{}, false
	}
	return Endpoint{Listener: name, Host: host, Port: int32(port), Protocol: b.Protocols[name]}, true
}

// ControllerRecord is the /controller document.
type ControllerRecord struct {
	Version   int    `json:"version"`
	BrokerID  int32  `json:"brokerid"`
	Timestamp string `json:"timestamp"`
}

// Assignment is a /brokers/topics/<topic> document: the topic id and each
// partition's replica list (Kafka's version 3 layout).
type Assignment struct {
	Version          int                `json:"version"`
	TopicID          TopicID            `json:"topic_id"`
	Partitions       map[int32][]int32  `json:"-"`
	AddingReplicas   map[int32][]int32  `json:"-"`
	RemovingReplicas map[int32][]int32  `json:"-"`
	RawPartitions    map[string][]int32 `json:"partitions"`
	RawAdding        map[string][]int32 `json:"adding_replicas"`
	RawRemoving      map[string][]int32 `json:"removing_replicas"`
}

// TopicID is a 16-byte topic id, stored as Kafka does (base64url, no padding).
type TopicID [16]byte

func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// MarshalJSON writes the Kafka string form.
func (id TopicID) MarshalJSON() ([]byte, error) { return json.Marshal(id.String()) }

// UnmarshalJSON reads the Kafka string form.
func (id *TopicID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(raw) != 16 {
		return fmt.Errorf("metadata: bad topic id %q", s)
	}
	copy(id[:], raw)
	return nil
}

func toRaw(m map[int32][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(m))
	for p, r := range m {
		out[strconv.Itoa(int(p))] = r
	}
	return out
}

func fromRaw(m map[string][]int32) (map[int32][]int32, error) {
	out := make(map[int32][]int32, len(m))
	for k, r := range m {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("metadata: bad partition %q", k)
		}
		out[int32(p)] = r
	}
	return out, nil
}

// EncodeAssignment writes an assignment document (appendAssignment: the
// bytes encoding/json writes, without its reflection).
func EncodeAssignment(a Assignment) []byte {
	return appendAssignment(make([]byte, 0, 80+12*len(a.Partitions)), a)
}

// encodeAssignmentJSON is EncodeAssignment through encoding/json: the
// reference appendAssignment is held to.
func encodeAssignmentJSON(a Assignment) []byte {
	a.Version = 3
	a.RawPartitions, a.RawAdding, a.RawRemoving = toRaw(a.Partitions), toRaw(a.AddingReplicas), toRaw(a.RemovingReplicas)
	b, _ := json.Marshal(a)
	return b
}

// DecodeAssignment reads an assignment document.
func DecodeAssignment(b []byte) (Assignment, error) {
	if a, ok := decodeAssignmentFast(b); ok {
		return a, nil
	}
	var a Assignment
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("metadata: assignment: %w", err)
	}
	var err error
	if a.Partitions, err = fromRaw(a.RawPartitions); err != nil {
		return a, err
	}
	if a.AddingReplicas, err = fromRaw(a.RawAdding); err != nil {
		return a, err
	}
	a.RemovingReplicas, err = fromRaw(a.RawRemoving)
	a.RawPartitions, a.RawAdding, a.RawRemoving = nil, nil, nil
	return a, err
}

// DenseAssignment is an assignment document with its partitions' replica
// lists in a slice indexed by partition id, nil where the document has no
// such partition (an empty list where it has one without replicas): the
// controller's form, which reads a topic of 1000 partitions without a map
// of 1000 entries.
type DenseAssignment struct {
	TopicID                          TopicID
	Replicas                         [][]int32
	AddingReplicas, RemovingReplicas map[int32][]int32
}

// DecodeDenseAssignment reads an assignment document as a DenseAssignment;
// a partition id below 0 or of a million or more is an error (the slice is
// as long as the largest id).
func DecodeDenseAssignment(b []byte) (DenseAssignment, error) {
	if a, lists, ok := decodeAssignmentWith(b, true); ok {
		return DenseAssignment{TopicID: a.TopicID, Replicas: lists, AddingReplicas: a.AddingReplicas, RemovingReplicas: a.RemovingReplicas}, nil
	}
	a, err := DecodeAssignment(b)
	if err != nil {
		return DenseAssignment{}, err
	}
	return a.Dense()
}

// Dense is a as a DenseAssignment (the replica lists are shared); a
// partition id below 0 or of a million or more is an error.
func (a Assignment) Dense() (DenseAssignment, error) {
	d := DenseAssignment{TopicID: a.TopicID, AddingReplicas: a.AddingReplicas, RemovingReplicas: a.RemovingReplicas}
	for _, p := range a.SortedPartitions() {
		if p < 0 || p >= maxDensePartition {
			return DenseAssignment{}, fmt.Errorf("metadata: assignment: partition %d out of range", p)
		}
		d.Replicas = append(d.Replicas, make([][]int32, int(p)+1-len(d.Replicas))...)
		if d.Replicas[p] = a.Partitions[p]; d.Replicas[p] == nil {
			d.Replicas[p] = []int32{}
		}
	}
	return d, nil
}

// SortedPartitions lists an assignment's partition ids in order.
func (a Assignment) SortedPartitions() []int32 {
	ps := make([]int32, 0, len(a.Partitions))
	for p := range a.Partitions {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// LeaderAndIsr is a partition's state (a row of its state chunk,
// chunks.go). PartitionEpoch counts the writes to the state (ZooKeeper's
// zkVersion, which Kafka sends as the partition epoch).
type LeaderAndIsr struct {
	Leader          int32
	LeaderEpoch     int32
	ISR             []int32
	ControllerEpoch int32
	PartitionEpoch  int32
}

// TopicConfig is a /config/topics/<topic> document.
type TopicConfig struct {
	Version int               `json:"version"`
	Config  map[string]string `json:"config"`
}

// EncodeTopicConfig writes a topic config document.
func EncodeTopicConfig(cfg map[string]string) []byte {
	if cfg == nil {
		cfg = map[string]string{}
	}
	b, _ := json.Marshal(TopicConfig{Version: 1, Config: cfg})
	return b
}

// DecodeTopicConfig reads a topic config document.
func DecodeTopicConfig(b []byte) (map[string]string, error) {
	var c TopicConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("metadata: topic config: %w", err)
	}
	return c.Config, nil
}

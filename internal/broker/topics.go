package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/api"
)

// topicRecord is one topic as the local registry stores it.
type topicRecord struct {
	ID         uuid.UUID         `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// topicRegistry is the single-broker topic catalogue: a JSON file written
// atomically (temp file, fsync, rename, fsync of the directory). The
// coordination-store issue replaces it with /brokers/topics in the store.
type topicRegistry struct {
	path   string
	nodeID int32

	mu     sync.RWMutex
	topics map[string]topicRecord
	byID   map[uuid.UUID]string
}

func openTopicRegistry(dir string, nodeID int32) (*topicRegistry, error) {
	r := &topicRegistry{path: filepath.Join(dir, "samsa-topics.json"), nodeID: nodeID,
		topics: map[string]topicRecord{}, byID: map[uuid.UUID]string{}}
	b, err := os.ReadFile(r.path)
	if os.IsNotExist(err) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("broker: reading topics: %w", err)
	}
	if err := json.Unmarshal(b, &r.topics); err != nil {
		return nil, fmt.Errorf("broker: decoding %s: %w", r.path, err)
	}
	for name, t := range r.topics {
		r.byID[t.ID] = name
	}
	return r, nil
}

func (r *topicRegistry) saveLocked() error {
	b, err := json.MarshalIndent(r.topics, "", "  ")
	if err != nil {
		return err
	}
	return writeFileSync(r.path, b)
}

// writeFileSync replaces path with data durably.
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (r *topicRegistry) info(name string, t topicRecord) api.TopicInfo {
	ti := api.TopicInfo{Name: name, ID: t.ID, Configs: t.Configs}
	for p := range t.Partitions {
		ti.Partitions = append(ti.Partitions, api.PartitionInfo{
			ID: p, Leader: r.nodeID, LeaderEpoch: 0,
			Replicas: []int32{r.nodeID}, ISR: []int32{r.nodeID},
		})
	}
	return ti
}

func (r *topicRegistry) Topics() []api.TopicInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.topics))
	for n := range r.topics {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]api.TopicInfo, 0, len(names))
	for _, n := range names {
		out = append(out, r.info(n, r.topics[n]))
	}
	return out
}

func (r *topicRegistry) Topic(name string) (api.TopicInfo, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.topics[name]
	if !ok {
		return api.TopicInfo{}, false
	}
	return r.info(name, t), true
}

func (r *topicRegistry) TopicByID(id [16]byte) (api.TopicInfo, bool) {
	r.mu.RLock()
	name, ok := r.byID[uuid.UUID(id)]
	r.mu.RUnlock()
	if !ok {
		return api.TopicInfo{}, false
	}
	return r.Topic(name)
}

func (r *topicRegistry) Deleting(string) bool { return false }

// create registers a topic; the caller creates its partitions.
func (r *topicRegistry) create(ct api.CreateTopic, validateOnly bool) (api.TopicInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.topics[ct.Name]; ok {
		return api.TopicInfo{}, fmt.Errorf("%w: topic %q already exists", kerr.TopicAlreadyExists, ct.Name)
	}
	for _, replicas := range ct.Assignment {
		if len(replicas) != 1 || replicas[0] != r.nodeID {
			return api.TopicInfo{}, fmt.Errorf("%w: replicas must be [%d] on a single broker", kerr.InvalidReplicaAssignment, r.nodeID)
		}
	}
	t := topicRecord{ID: uuid.New(), Partitions: ct.NumPartitions, Configs: ct.Configs}
	if validateOnly {
		return r.info(ct.Name, t), nil
	}
	r.topics[ct.Name] = t
	r.byID[t.ID] = ct.Name
	if err := r.saveLocked(); err != nil {
		delete(r.topics, ct.Name)
		delete(r.byID, t.ID)
		return api.TopicInfo{}, fmt.Errorf("broker: saving topics: %w", err)
	}
	return r.info(ct.Name, t), nil
}

func (r *topicRegistry) remove(name string) (topicRecord, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.topics[name]
	if !ok {
		return t, kerr.UnknownTopicOrPartition
	}
	delete(r.topics, name)
	delete(r.byID, t.ID)
	if err := r.saveLocked(); err != nil {
		r.topics[name], r.byID[t.ID] = t, name
		return t, fmt.Errorf("broker: saving topics: %w", err)
	}
	return t, nil
}

var _ interface {
	api.Metadata
} = (*localMeta)(nil)

// localMeta answers api.Metadata and api.Admin on a single broker.
type localMeta struct {
	*topicRegistry
	b *Broker
}

func (m *localMeta) ClusterID() string         { return m.b.clusterID }
func (m *localMeta) ControllerID() int32       { return m.b.nodeID }
func (m *localMeta) Brokers() []api.BrokerInfo { return []api.BrokerInfo{m.b.self()} }

func (m *localMeta) CreateTopic(_ context.Context, ct api.CreateTopic, validateOnly bool) (api.TopicInfo, error) {
	t, err := m.create(ct, validateOnly)
	if err != nil || validateOnly {
		return t, err
	}
	return t, m.b.hostTopic(t)
}

func (m *localMeta) DeleteTopic(_ context.Context, name string) error {
	t, err := m.remove(name)
	if err != nil {
		return err
	}
	return m.b.unhostTopic(name, t.Partitions)
}

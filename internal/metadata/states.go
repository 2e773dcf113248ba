package metadata

import (
	"context"
	"errors"
	"sync"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// StateUpdate is one conditional partition-state write: Version is the
// version read (0: the state must not exist yet).
type StateUpdate struct {
	TP      TopicPartition
	State   LeaderAndIsr
	Version int64
}

// StateResult says how one update went: Written with the new Version, or a
// version conflict (someone else wrote the state; re-read and retry).
type StateResult struct {
	Written  bool
	Conflict bool
	Version  int64
}

// writeStatesInFlight is how many of WriteStates' transactions may be
// pending at once. Each transaction waits for a commit (a disk sync); the
// store groups concurrent ones into one, so a large write costs a few
// commits per writeStatesInFlight batches instead of one per batch.
const writeStatesInFlight = 16

// WriteStates writes partition states conditionally on their versions,
// many per fenced transaction, several transactions in flight (the states
// are distinct keys, so their order does not matter). When a batch fails,
// its updates are tried one by one to find the conflicts. A lost fence is
// ErrControllerMoved and stops everything; results are then partial.
func (c *Client) WriteStates(ctx context.Context, f Fence, updates []StateUpdate) ([]StateResult, error) {
	results := make([]StateResult, len(updates))
	per := max(1, (c.s.MaxTxnOps()-1)/2)
	if len(updates) == 0 {
		return results, nil
	}
	if len(updates) <= per {
		return results, c.writeStateBatch(ctx, f, updates, results)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, writeStatesInFlight)
	for start := 0; start < len(updates) && ctx.Err() == nil; start += per {
		end := min(start+per, len(updates))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := c.writeStateBatch(ctx, f, updates[start:end], results[start:end]); err != nil {
				mu.Lock()
				if firstErr == nil || errors.Is(err, ErrControllerMoved) {
					firstErr = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	return results, firstErr
}

// writeStateBatch writes one transaction's worth of updates, then one by
// one if it failed.
func (c *Client) writeStateBatch(ctx context.Context, f Fence, batch []StateUpdate, results []StateResult) error {
	cmps, ops := stateOps(batch)
	rev, err := c.FencedTxnRevision(ctx, f, cmps, ops)
	if err != nil {
		return err
	}
	if rev > 0 {
		for i := range batch {
			results[i] = StateResult{Written: true, Version: rev}
		}
		return nil
	}
	for i, u := range batch {
		cmps, ops := stateOps([]StateUpdate{u})
		rev, err := c.FencedTxnRevision(ctx, f, cmps, ops)
		if err != nil {
			return err
		}
		results[i] = StateResult{Written: rev > 0, Conflict: rev == 0, Version: rev}
	}
	return nil
}

func stateOps(us []StateUpdate) ([]metastore.Cmp, []metastore.Op) {
	cmps := make([]metastore.Cmp, 0, len(us))
	ops := make([]metastore.Op, 0, len(us))
	for _, u := range us {
		key := PartitionStateKey(u.TP.Topic, u.TP.Partition)
		cmps = append(cmps, metastore.Cmp{Key: key, Version: u.Version})
		ops = append(ops, metastore.Put(key, EncodeState(u.State)))
	}
	return cmps, ops
}

// FencedTxnRevision is FencedTxn returning the revision written (0 when a
// cmp failed).
func (c *Client) FencedTxnRevision(ctx context.Context, f Fence, cmps []metastore.Cmp, ops []metastore.Op) (int64, error) {
	all := append([]metastore.Cmp{{Key: ControllerEpochKey, Version: f.Version}}, cmps...)
	res, err := c.s.Txn(ctx, all, ops)
	if err != nil {
		return 0, err
	}
	if res.Succeeded {
		return res.Revision, nil
	}
	kv, found, err := c.s.Get(ctx, ControllerEpochKey)
	if err != nil {
		return 0, err
	}
	if !found || kv.Version != f.Version {
		return 0, ErrControllerMoved
	}
	return 0, nil
}

// TopicState is a topic's assignment with each partition's state as read.
type TopicState struct {
	Name              string
	Assignment        Assignment
	AssignmentVersion int64
	States            map[int32]VersionedState
}

// VersionedState is a partition state and the version it was read at.
type VersionedState struct {
	State   LeaderAndIsr
	Version int64
}

// LoadTopics reads every topic assignment and partition state in one
// listing, and the revision it was read at.
func (c *Client) LoadTopics(ctx context.Context) (map[string]*TopicState, int64, error) {
	kvs, rev, err := c.s.List(ctx, TopicsPrefix)
	if err != nil {
		return nil, 0, err
	}
	topics := map[string]*TopicState{}
	get := func(name string) *TopicState {
		t := topics[name]
		if t == nil {
			t = &TopicState{Name: name, States: map[int32]VersionedState{}}
			topics[name] = t
		}
		return t
	}
	for _, kv := range kvs {
		if err := ApplyTopicsKV(get, kv); err != nil {
			return nil, 0, err
		}
	}
	for name, t := range topics { // states left behind by a topic whose assignment is gone
		if t.AssignmentVersion == 0 {
			delete(topics, name)
		}
	}
	return topics, rev, nil
}

// ApplyTopicsKV folds one key under TopicsPrefix into topic states.
func ApplyTopicsKV(get func(string) *TopicState, kv metastore.KV) error {
	topic, p, ok := ParseTopicsKey(kv.Key)
	if !ok {
		return nil
	}
	t := get(topic)
	if p < 0 {
		a, err := DecodeAssignment(kv.Value)
		if err != nil {
			return err
		}
		t.Assignment, t.AssignmentVersion = a, kv.Version
		return nil
	}
	s, err := DecodeState(kv.Value)
	if err != nil {
		return err
	}
	t.States[p] = VersionedState{State: s, Version: kv.Version}
	return nil
}

// CreateTopic writes a new topic's configs and assignment in one
// transaction (the admin path, unfenced as Kafka's AdminZkClient).
// ErrTopicExists if the topic key exists (also while it is being deleted).
func (c *Client) CreateTopic(ctx context.Context, name string, a Assignment, configs map[string]string) error {
	cfg := EncodeTopicConfig(configs)
	res, err := c.s.Txn(ctx, []metastore.Cmp{{Key: TopicKey(name)}},
		[]metastore.Op{metastore.Put(TopicConfigKey(name), cfg), metastore.Put(TopicKey(name), EncodeAssignment(a))})
	if err != nil {
		return err
	}
	if !res.Succeeded {
		return ErrTopicExists
	}
	return nil
}

// MarkTopicForDeletion writes /admin/delete_topics/<topic>.
func (c *Client) MarkTopicForDeletion(ctx context.Context, name string) error {
	_, err := c.s.Txn(ctx, nil, []metastore.Op{metastore.Put(DeleteTopicKey(name), nil)})
	return err
}

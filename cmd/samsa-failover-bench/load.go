package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// layout is the cluster the loader writes: topics of perTopic partitions
// (the last one may be shorter), replicas spread round-robin over brokers
// 1..brokers, leader = first replica, ISR = all replicas.
type layout struct {
	partitions int
	perTopic   int
	rf         int
	brokers    int
}

func (l layout) topics() int { return (l.partitions + l.perTopic - 1) / l.perTopic }

func topicName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// topicOps are the writes for topic i: its assignment and its state
// chunks, as a cluster where every partition is online would have them.
func (l layout) topicOps(i int) []metastore.Op {
	n := min(l.perTopic, l.partitions-i*l.perTopic)
	name := topicName(i)
	a := metadata.Assignment{TopicID: metadata.TopicID(uuid.New()), Partitions: make(map[int32][]int32, n)}
	var ops []metastore.Op
	var chunk []metadata.StateEntry
	for p := range int32(n) {
		replicas := make([]int32, l.rf)
		for r := range replicas {
			replicas[r] = (int32(i)+p+int32(r))%int32(l.brokers) + 1
		}
		a.Partitions[p] = replicas
		chunk = append(chunk, metadata.StateEntry{Partition: p,
			State: metadata.LeaderAndIsr{Leader: replicas[0], ISR: replicas, ControllerEpoch: 1}})
		if p == int32(n)-1 || metadata.ChunkOf(p+1) != metadata.ChunkOf(p) {
			ops = append(ops, metastore.Put(metadata.StateChunkKey(name, metadata.ChunkOf(p)), metadata.EncodeStateChunk(chunk)))
			chunk = chunk[:0]
		}
	}
	// The assignment goes last, so a topic is never visible without its
	// states (the controller would elect them as new partitions).
	return append(ops, metastore.Put(metadata.TopicKey(name), metadata.EncodeAssignment(a)))
}

// load writes the layout with writers concurrent writers, each sending
// transactions within the store's limits.
func load(ctx context.Context, s metastore.Store, l layout, writers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range l.topics() {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := writeOps(ctx, s, l.topicOps(i)); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// writeOps writes ops in order, in transactions of at most MaxTxnOps
// operations.
func writeOps(ctx context.Context, s metastore.Store, ops []metastore.Op) error {
	per := s.MaxTxnOps()
	for start := 0; start < len(ops); start += per {
		if err := writeTxn(ctx, s, ops[start:min(start+per, len(ops))]); err != nil {
			return err
		}
	}
	return nil
}

// writeTxn writes ops in one transaction or, when the store refuses it as
// too large (ZooKeeper bounds a multi's bytes by jute.maxbuffer too), in
// two halves, the first committed before the second, so the order holds.
func writeTxn(ctx context.Context, s metastore.Store, ops []metastore.Op) error {
	res, err := s.Txn(ctx, nil, ops)
	if errors.Is(err, metastore.ErrTooManyOps) && len(ops) > 1 {
		if err := writeTxn(ctx, s, ops[:len(ops)/2]); err != nil {
			return err
		}
		return writeTxn(ctx, s, ops[len(ops)/2:])
	}
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if !res.Succeeded {
		return fmt.Errorf("load: unconditional transaction failed")
	}
	return nil
}

package controller

// Partition-state writes. The store keeps states in chunks of
// metadata.StateChunkSize partitions (metadata/chunks.go); the state
// machines still think per partition. writeStates groups their updates by
// chunk, fills each chunk with its other partitions' cached states, and
// writes every chunk conditional on the version it was last read or
// written at, so a write by anyone else (another controller that lost its
// fence in between, an operator) is a version conflict: the callers re-read
// the chunk and decide again, as Kafka re-reads a znode after a zkVersion
// mismatch.
//
// Evidence for chunks (812313b): elections wrote one etcd key per
// partition, ~10 µs each; with chunks (and the dense context of topics.go)
// cmd/samsa-failover-bench -mode crash at 100k partitions went from 29.7
// to 12.8 µs per led partition.

import (
	"context"
	"slices"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// chunkID names a state chunk.
type chunkID struct {
	topic string
	chunk int32
}

func chunkOf(tp TP) chunkID { return chunkID{tp.Topic, metadata.ChunkOf(tp.Partition)} }

// stateUpdate is one partition's next state.
type stateUpdate struct {
	TP    TP
	State metadata.LeaderAndIsr
}

// writeStates writes updates under the fence. conflict[i] is true when
// update i's chunk was written by someone else since the controller read
// it (nothing of that chunk was written), or when an earlier update in the
// list is for the same partition (it was computed from a state that is no
// longer current). Written updates are in the context when it returns.
func (c *Controller) writeStates(ctx context.Context, updates []stateUpdate) (conflict []bool, err error) {
	if len(updates) == 0 {
		return nil, nil
	}
	conflict = make([]bool, len(updates))
	if c.staged != nil {
		c.staged.add(c.ctx, updates)
		return conflict, nil
	}
	// Updates come mostly sorted: a chunk's updates are then one run, and
	// only a chunk met again after others needs the map.
	var order []chunkID
	members := map[chunkID][]int{}
	var last chunkID
	var run []int
	flush := func() {
		if run != nil {
			if _, seen := members[last]; !seen {
				order = append(order, last)
			}
			members[last] = append(members[last], run...)
		}
	}
	for i, u := range updates {
		if id := chunkOf(u.TP); run == nil || id != last {
			flush()
			last, run = id, make([]int, 0, 16)
		}
		run = append(run, i)
	}
	flush()
	results, err := c.md.WriteChunks(ctx, c.ctx.fence, c.chunkWrites(order, updates, members, conflict))
	if err != nil {
		return nil, err
	}
	for j, id := range order {
		if !results[j].Written {
			for _, i := range members[id] {
				conflict[i] = true
			}
			continue
		}
		c.ctx.chunkVer[id] = results[j].Version
		for _, i := range members[id] {
			if !conflict[i] {
				c.ctx.setState(updates[i].TP, updates[i].State)
			}
		}
	}
	return conflict, nil
}

// writeStatesOrReread is writeStates, then a re-read of the chunks of the
// updates that met a conflict; those are returned for the caller to decide
// again on fresh states.
func (c *Controller) writeStatesOrReread(ctx context.Context, updates []stateUpdate) (conflict []bool, retry []stateUpdate, err error) {
	if conflict, err = c.writeStates(ctx, updates); err != nil {
		return nil, nil, err
	}
	retry, err = c.rereadConflicts(ctx, updates, conflict, "partition state version conflict; re-reading")
	return conflict, retry, err
}

// settleStates writes, for each partition of tps, the state next computes
// from the context (false: leave the partition alone), and computes again
// from a fresh read where a write met a version conflict, until every
// partition is written or left alone. written is called for each write.
func (c *Controller) settleStates(ctx context.Context, tps []TP, next func(TP) (metadata.LeaderAndIsr, bool), written func(stateUpdate)) error {
	for len(tps) > 0 {
		updates := make([]stateUpdate, 0, len(tps))
		for _, tp := range tps {
			if st, ok := next(tp); ok {
				updates = append(updates, stateUpdate{TP: tp, State: st})
			}
		}
		conflict, retry, err := c.writeStatesOrReread(ctx, updates)
		if err != nil {
			return err
		}
		for i, u := range updates {
			if !conflict[i] {
				written(u)
			}
		}
		tps = make([]TP, len(retry))
		for i, u := range retry {
			tps[i] = u.TP
		}
	}
	return nil
}

// chunkWrites encodes the chunks ids from the context, with
// updates[members[id]] applied (appendChunk), each conditional on the
// version the context holds.
func (c *Controller) chunkWrites(ids []chunkID, updates []stateUpdate, members map[chunkID][]int, conflict []bool) []metadata.ChunkWrite {
	writes := make([]metadata.ChunkWrite, len(ids))
	// The documents, one after the other (about 25 bytes a state).
	buf := make([]byte, 0, len(ids)*metadata.StateChunkSize*28)
	for j, id := range ids {
		start := len(buf)
		buf = c.appendChunk(buf, id, updates, members[id], conflict)
		writes[j] = metadata.ChunkWrite{Topic: id.topic, Chunk: id.chunk, Version: c.ctx.chunkVer[id], Value: buf[start:len(buf):len(buf)]}
	}
	return writes
}

// appendChunk appends chunk id's document once updates[which] are
// applied; a second update of the same partition is not applied but marked
// in conflict.
func (c *Controller) appendChunk(b []byte, id chunkID, updates []stateUpdate, which []int, conflict []bool) []byte {
	lo := id.chunk * metadata.StateChunkSize
	var override [metadata.StateChunkSize]int32 // 1 + index in updates
	hi := lo
	for _, i := range which {
		off := updates[i].TP.Partition - lo
		if override[off] != 0 {
			conflict[i] = true
			continue
		}
		override[off] = int32(i) + 1
		hi = max(hi, updates[i].TP.Partition+1)
	}
	if t := c.ctx.topic(id.topic); t != nil {
		hi = max(hi, min(lo+metadata.StateChunkSize, t.end()))
	}
	b = metadata.AppendChunkStart(b)
	first := true
	states := c.ctx.states.topic(id.topic)
	for p := lo; p < hi; p++ {
		st, ok := metadata.LeaderAndIsr{}, false
		if i := override[p-lo]; i != 0 {
			st, ok = updates[i-1].State, true
		} else {
			st, ok = states.get(p)
		}
		if ok {
			b = metadata.AppendChunkState(b, first, p, st)
			first = false
		}
	}
	return metadata.AppendChunkEnd(b)
}

// rereadChunk refreshes the context from the store's copy of tp's chunk
// after a version conflict.
func (c *Controller) rereadChunk(ctx context.Context, tp TP) error {
	id := chunkOf(tp)
	entries, ver, _, err := c.md.ReadChunk(ctx, id.topic, id.chunk)
	if err != nil {
		return err
	}
	c.ctx.replaceChunk(id, entries, ver)
	return nil
}

// replaceChunk makes the context's states of chunk id the given ones, read
// at version ver (0: the chunk does not exist).
func (cx *Context) replaceChunk(id chunkID, entries []metadata.StateEntry, ver int64) {
	slices.SortFunc(entries, func(a, b metadata.StateEntry) int { return int(a.Partition - b.Partition) })
	lo := id.chunk * metadata.StateChunkSize
	next := 0
	for p := lo; p < lo+metadata.StateChunkSize; p++ {
		tp := TP{Topic: id.topic, Partition: p}
		if next < len(entries) && entries[next].Partition == p {
			cx.setState(tp, entries[next].State)
			next++
			continue
		}
		if _, ok := cx.states.get(tp); ok {
			cx.delState(tp)
		}
	}
	if ver == 0 {
		delete(cx.chunkVer, id)
	} else {
		cx.chunkVer[id] = ver
	}
}

// topicChunks lists the state chunks of topic's partitions that the
// context holds a version of.
func (cx *Context) topicChunks(topic string) []chunkID {
	var out []chunkID
	if t := cx.topics[topic]; t != nil {
		for ch := int32(0); ch*metadata.StateChunkSize < t.end(); ch++ {
			if _, ok := cx.chunkVer[chunkID{topic, ch}]; ok {
				out = append(out, chunkID{topic, ch})
			}
		}
	}
	return out
}

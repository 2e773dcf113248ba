package group

// Loading and unloading a partition's groups (Kafka's
// GroupMetadataManager.loadGroupsForPartition and removeGroupsForPartition).
// The load replays the partition's records in order: the last metadata
// record of a group is its state (a tombstone removes it), the last offset
// record of each partition its commit (a tombstone removes it). Groups
// with members come back Stable, their sessions starting at the load, so
// members that are gone expire and the others carry on without a
// rebalance; a group with only offsets comes back Empty.

import (
	"context"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// BecomeLeader starts loading a partition this broker now leads at
// leaderEpoch; a load for an older epoch is ignored.
func (c *Coordinator) BecomeLeader(partition, leaderEpoch int32) {
	c.mu.Lock()
	if ps := c.parts[partition]; c.closed || (ps != nil && ps.epoch >= leaderEpoch) {
		c.mu.Unlock()
		return
	}
	c.unloadLocked(partition)
	c.parts[partition] = &partState{epoch: leaderEpoch, loading: true}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		c.load(partition, leaderEpoch)
	}()
}

// Resign unloads a partition this broker no longer leads.
func (c *Coordinator) Resign(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unloadLocked(partition)
}

func (c *Coordinator) unloadLocked(partition int32) {
	if c.parts[partition] == nil {
		return
	}
	delete(c.parts, partition)
	now := c.cfg.Now()
	n := 0
	for id, g := range c.groups {
		if c.PartitionFor(id) == partition {
			if g.State() != Dead {
				g.Shutdown(now)
			}
			c.forgetTxnGroup(g)
			delete(c.groups, id)
			n++
		}
	}
	c.log.Info("unloaded groups of __consumer_offsets partition", "partition", partition, "groups", n)
}

// loaded is what a load builds before installing it.
type loaded struct {
	meta    map[string]*Decoded      // last metadata record per group (nil Meta: tombstone)
	offsets map[string]map[TP]Offset // the groups' offsets maps, handed over whole
	// pending: transactional offsets whose marker is not read yet, per
	// producer id and group (Kafka's loader's pendingOffsets).
	pending map[int64]map[string]map[TP]Offset
	bad     int
}

// offsetsOf returns the map a record of group gid goes to: the group's
// committed offsets, or the producer's pending ones for a transactional
// batch.
func (l *loaded) offsetsOf(b *Batch, gid []byte) map[TP]Offset {
	all := l.offsets
	if b.Transactional {
		all = l.pending[b.ProducerID]
		if all == nil {
			all = map[string]map[TP]Offset{}
			l.pending[b.ProducerID] = all
		}
	}
	m := all[string(gid)]
	if m == nil {
		m = map[TP]Offset{}
		all[string(gid)] = m
	}
	return m
}

// offset applies one offset record (or its tombstone). A tombstone
// drops the committed offset and every producer's pending one, as Kafka's
// replay of a tombstone does (OffsetMetadataManager.replay).
func (l *loaded) offset(b *Batch, gid []byte, tp TP, o Offset, tombstone bool, pos int64) {
	if tombstone {
		delete(l.offsets[string(gid)], tp)
		for _, groups := range l.pending {
			delete(groups[string(gid)], tp)
		}
		return
	}
	o.logOffset = pos
	l.offsetsOf(b, gid)[tp] = o
}

// marker ends a producer's transaction read from the log: a COMMIT makes
// its pending offsets committed where nothing newer is (Kafka's
// olderThan), an ABORT drops them.
func (l *loaded) marker(producerID int64, commit bool) {
	groups := l.pending[producerID]
	delete(l.pending, producerID)
	if !commit {
		return
	}
	for gid, m := range groups {
		cur := l.offsets[gid]
		if cur == nil {
			cur = map[TP]Offset{}
			l.offsets[gid] = cur
		}
		for tp, o := range m {
			if c, ok := cur[tp]; !ok || c.logOffset < o.logOffset {
				cur[tp] = o
			}
		}
	}
}

func (c *Coordinator) load(partition, epoch int32) {
	start := time.Now()
	l := loaded{meta: map[string]*Decoded{}, offsets: map[string]map[TP]Offset{},
		pending: map[int64]map[string]map[TP]Offset{}}
	topics := map[string]string{} // one string per topic name
	err := c.cfg.Log.Load(c.ctx, partition, func(b Batch, pos int64, key, value []byte) {
		if b.Control {
			l.marker(b.ProducerID, b.Commit)
			return
		}
		b.Transactional = b.Transactional && b.ProducerID >= 0
		// Offset records, nearly all of them, without a string per
		// record: the map lookups by string(bytes) do not allocate.
		if gid, tb, part, ok := offsetKey(key); ok {
			var o Offset
			if value != nil {
				var err error
				if o, err = decodeOffsetValue(value); err != nil {
					l.bad++
					return
				}
			}
			topic, ok := topics[string(tb)]
			if !ok {
				topic = string(tb)
				topics[topic] = topic
			}
			l.offset(&b, gid, TP{topic, part}, o, value == nil, pos)
			return
		}
		d, err := Decode(key, value)
		if err != nil {
			l.bad++
			return
		}
		if d.IsMeta {
			l.meta[d.Group] = &d
			return
		}
		var o Offset
		if d.Offset != nil {
			o = *d.Offset
		}
		l.offset(&b, []byte(d.Group), d.TP, o, d.Offset == nil, pos)
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.parts[partition]
	if ps == nil || ps.epoch != epoch {
		return // resigned, or a newer leadership is loading
	}
	if err != nil {
		if c.ctx.Err() == nil {
			c.log.Error("loading __consumer_offsets partition failed", "partition", partition, "err", err)
		}
		delete(c.parts, partition)
		return
	}
	groups, offsets := c.install(partition, &l)
	ps.loading = false
	for _, tc := range ps.completions {
		c.completeTxnLocked(partition, tc.producerID, tc.commit)
	}
	ps.completions = nil
	c.log.Info("loaded groups of __consumer_offsets partition", "partition", partition, "leader_epoch", epoch,
		"groups", groups, "offsets", offsets, "undecodable", l.bad, "took", time.Since(start).Round(time.Millisecond))
}

// install builds the groups of a finished load; c.mu held.
func (c *Coordinator) install(partition int32, l *loaded) (groups, offsets int) {
	now := c.cfg.Now()
	for id, d := range l.meta {
		if d.Meta != nil {
			c.groups[id] = Restore(id, &c.cfg.Group, c.persistGroup, d.Meta, now)
		}
	}
	for id, m := range l.offsets {
		if len(m) == 0 {
			continue
		}
		g := c.getOrCreate(id, now)
		if len(g.offsets) == 0 {
			g.offsets = m // the map the load built, as it is
		} else {
			for tp, o := range m {
				g.ApplyOffset(tp, o, o.logOffset)
			}
		}
		offsets += len(m)
	}
	for pid, gs := range l.pending {
		for id, m := range gs {
			if len(m) == 0 {
				continue
			}
			g := c.getOrCreate(id, now)
			for tp, o := range m {
				g.PrepareTxnOffset(pid, tp, o, o.logOffset)
			}
			c.addTxnGroup(pid, id)
		}
	}
	for id, g := range c.groups {
		if l.meta[id] != nil || l.offsets[id] != nil || len(g.pendingTxn) > 0 && c.PartitionFor(id) == partition {
			groups++
		}
	}
	return groups, offsets
}

// append writes records to a partition this broker leads; c.mu held.
func (c *Coordinator) append(partition int32, recs []record.KV, now time.Time) (func(context.Context) error, int64, error) {
	return c.appendBatch(partition, record.Build(now.UnixMilli(), recs))
}

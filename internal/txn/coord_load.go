package txn

// Loading and unloading a partition's transactional ids (Kafka's
// TransactionStateManager.loadTransactionsForTxnTopicPartition and
// removeTransactionsForTxnTopicPartition). The load replays the
// partition's records in order: the last record of an id is its state, a
// tombstone removes it. Transactions found in PrepareCommit or
// PrepareAbort have their markers sent again (a partition that has one
// already answers it as written); Ongoing ones time out as usual.

import (
	"context"
	"time"
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
	ctx, cancel := context.WithCancel(c.ctx)
	ps := &partState{epoch: leaderEpoch, loading: true, ctx: ctx, cancel: cancel}
	c.parts[partition] = ps
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		c.load(partition, ps)
	}()
}

// Resign unloads a partition this broker no longer leads.
func (c *Coordinator) Resign(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unloadLocked(partition)
}

func (c *Coordinator) unloadLocked(partition int32) {
	ps := c.parts[partition]
	if ps == nil {
		return
	}
	ps.cancel()
	delete(c.parts, partition)
	n := 0
	for id := range c.txns {
		if c.PartitionFor(id) == partition {
			delete(c.txns, id)
			n++
		}
	}
	c.log.Info("unloaded transactional ids of __transaction_state partition", "partition", partition, "ids", n)
}

func (c *Coordinator) load(partition int32, ps *partState) {
	start := time.Now()
	last := map[string]*Transit{}
	bad := 0
	err := c.cfg.Log.Load(ps.ctx, partition, func(_ int64, key, value []byte) {
		t, dead, err := Decode(key, value)
		switch {
		case err != nil:
			bad++
		case dead:
			delete(last, t.ID)
		default:
			last[t.ID] = &t
		}
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parts[partition] != ps {
		return // resigned, or a newer leadership is loading
	}
	if err != nil {
		if ps.ctx.Err() == nil {
			c.log.Error("loading __transaction_state partition failed", "partition", partition, "err", err)
		}
		ps.cancel()
		delete(c.parts, partition)
		return
	}
	var resume []*Metadata
	for id, t := range last {
		m := FromTransit(*t)
		c.txns[id] = m
		if m.State == PrepareCommit || m.State == PrepareAbort {
			resume = append(resume, m)
		}
	}
	ps.loading = false
	for _, m := range resume {
		c.startMarkers(m, partition, ps)
	}
	c.log.Info("loaded transactional ids of __transaction_state partition", "partition", partition,
		"coordinator_epoch", ps.epoch, "ids", len(last), "resumed_markers", len(resume), "undecodable", bad,
		"took", time.Since(start).Round(time.Millisecond))
}

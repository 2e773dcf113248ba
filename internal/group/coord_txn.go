package group

// Transactional offset commits on the coordinator (Kafka's
// GroupCoordinator.handleTxnCommitOffsets, GroupMetadataManager.storeOffsets
// with a producer id, and handleTxnCompletion).
//
// TxnOffsetCommit: an empty group id is INVALID_GROUP_ID; a group the
// coordinator does not know is created Empty (any generation: Kafka
// creates it before validating, which then refuses a generation or member
// with UNKNOWN_MEMBER_ID); metadata longer than offset.metadata.max.bytes
// is OFFSET_METADATA_TOO_LARGE. The others are written as one
// transactional batch of the producer and, once appended, are pending for
// the producer; the answer waits for the high watermark (acks=all). A
// failed write drops them again.
//
// CompleteTxn: the marker of a producer's transaction was written to a
// partition of __consumer_offsets (WriteTxnMarkers, after the high
// watermark covers it): every group of that partition with pending offsets
// of the producer commits or drops them. A partition still loading keeps
// the completion and applies it after the load (Kafka runs
// handleTxnCompletion on the loading scheduler, after the load).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TxnProducer is the producer of a TxnOffsetCommit.
type TxnProducer struct {
	ID    int64
	Epoch int16
}

// CommitTxnOffsets validates and writes a TxnOffsetCommit's offsets,
// pending for the producer until its transaction ends, and returns an
// error per commit (nil: written). ctx is the request's (see await).
func (c *Coordinator) CommitTxnOffsets(ctx context.Context, groupID string, p TxnProducer, memberID string, instanceID *string,
	generation int32, commits []Commit) []error {
	out := make([]error, len(commits))
	all := func(err error) []error {
		for i := range out {
			out[i] = err
		}
		return out
	}
	if groupID == "" {
		return all(kerr.InvalidGroupID)
	}
	c.mu.Lock()
	now := c.cfg.Now()
	g, err := c.lookup(groupID)
	if err != nil {
		c.mu.Unlock()
		return all(err)
	}
	if g == nil {
		g = c.getOrCreate(groupID, now)
	}
	if err := g.ValidateTxnCommit(memberID, instanceID, generation); err != nil {
		c.mu.Unlock()
		return all(err)
	}
	recs, idx := c.offsetRecords(groupID, commits, now, out)
	if len(recs) == 0 {
		c.mu.Unlock()
		return out
	}
	wait, base, err := c.appendBatch(c.PartitionFor(groupID), TxnBatch(now.UnixMilli(), p.ID, p.Epoch, recs))
	if err == nil {
		for j, i := range idx {
			cm := commits[i]
			g.PrepareTxnOffset(p.ID, cm.TP, Offset{Offset: cm.Offset, LeaderEpoch: cm.LeaderEpoch,
				Metadata: cm.Metadata, CommitTime: now}, base+int64(j))
		}
		c.addTxnGroup(p.ID, groupID)
	}
	c.mu.Unlock()
	if err == nil {
		err = c.await(ctx, wait)
	}
	if err != nil && wait != nil {
		c.mu.Lock()
		if c.groups[groupID] == g {
			for j, i := range idx {
				g.FailTxnOffset(p.ID, commits[i].TP, base+int64(j))
			}
			if !g.HasPendingTxn(p.ID) {
				c.dropTxnGroup(p.ID, groupID)
			}
		}
		c.mu.Unlock()
	}
	for _, i := range idx {
		out[i] = err
	}
	return out
}

// Serves answers nil when this coordinator serves the group's partition,
// else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS (Kafka's
// validateGroupStatus), for checks that come before a request's own.
func (c *Coordinator) Serves(groupID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.lookup(groupID)
	return err
}

// CompleteTxn applies a producer's transaction marker written to a
// partition of __consumer_offsets: the pending offsets of the producer in
// that partition's groups are committed (commit) or dropped.
func (c *Coordinator) CompleteTxn(partition int32, producerID int64, commit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.parts[partition]
	switch {
	case ps == nil:
		return // not led here: the next leader reads the marker when it loads
	case ps.loading:
		ps.completions = append(ps.completions, txnCompletion{producerID, commit})
		return
	}
	c.completeTxnLocked(partition, producerID, commit)
}

// completeTxnLocked completes producerID's transaction in the groups of
// a loaded partition; c.mu held.
func (c *Coordinator) completeTxnLocked(partition int32, producerID int64, commit bool) {
	n := 0
	for id := range c.txnGroups[producerID] {
		if c.PartitionFor(id) != partition {
			continue
		}
		c.dropTxnGroup(producerID, id)
		if g := c.groups[id]; g != nil && g.State() != Dead && g.CompleteTxn(producerID, commit) {
			n++
		}
	}
	if n > 0 {
		c.log.Debug("transactional offsets completed", "partition", partition, "producer_id", producerID,
			"commit", commit, "groups", n)
	}
}

// addTxnGroup notes that the group has pending offsets of the producer;
// c.mu held.
func (c *Coordinator) addTxnGroup(producerID int64, groupID string) {
	m := c.txnGroups[producerID]
	if m == nil {
		m = map[string]struct{}{}
		c.txnGroups[producerID] = m
	}
	m[groupID] = struct{}{}
}

// dropTxnGroup forgets that note; c.mu held.
func (c *Coordinator) dropTxnGroup(producerID int64, groupID string) {
	if m := c.txnGroups[producerID]; m != nil {
		delete(m, groupID)
		if len(m) == 0 {
			delete(c.txnGroups, producerID)
		}
	}
}

// forgetTxnGroup drops a group leaving the coordinator from the index;
// c.mu held.
func (c *Coordinator) forgetTxnGroup(g *Group) {
	for _, pid := range g.PendingTxnProducers() {
		c.dropTxnGroup(pid, g.ID)
	}
}

// appendBatch writes a built batch to a partition this broker leads; c.mu
// held.
func (c *Coordinator) appendBatch(partition int32, batch []byte) (func(context.Context) error, int64, error) {
	ps := c.parts[partition]
	if ps == nil || ps.loading {
		return nil, 0, errNotCoordinator
	}
	wait, base, err := c.cfg.Log.Append(partition, batch)
	if err != nil {
		return nil, 0, storeError(err)
	}
	return wait, base, nil
}

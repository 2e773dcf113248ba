package group

// Offset commits, fetches and deletes on the coordinator, and the
// retention of offsets (Kafka's GroupMetadataManager.storeOffsets,
// getOffsets, cleanupGroupMetadata).
//
// OffsetCommit: per partition, metadata longer than
// offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE and not written;
// the others are validated against the group (offsets.go), written in one
// batch and applied, and answered, once the high watermark covers it. A
// commit outside group management (generation -1, no member) to an
// unknown group creates it, Empty and without a protocol type.
//
// OffsetFetch: a group or partition with nothing committed answers offset
// -1 and no error.

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
)

// Commit is one partition of an OffsetCommit.
type Commit struct {
	TP          TP
	Offset      int64
	LeaderEpoch int32
	Metadata    string
}

// offsetRecords makes the records of the commits whose metadata fits
// offset.metadata.max.bytes and returns them with the commits' indexes;
// the others' answer in out is OFFSET_METADATA_TOO_LARGE.
func (c *Coordinator) offsetRecords(groupID string, commits []Commit, now time.Time, out []error) ([]record.KV, []int) {
	var recs []record.KV
	var idx []int
	for i, cm := range commits {
		if len(cm.Metadata) > c.cfg.MetadataMaxBytes {
			out[i] = kerr.OffsetMetadataTooLarge
			continue
		}
		o := Offset{Offset: cm.Offset, LeaderEpoch: cm.LeaderEpoch, Metadata: cm.Metadata, CommitTime: now}
		recs = append(recs, OffsetRecord(groupID, cm.TP, &o))
		idx = append(idx, i)
	}
	return recs, idx
}

// CommitOffsets validates, writes and applies commits and returns an error
// per commit (nil: committed). ctx is the request's (see await).
func (c *Coordinator) CommitOffsets(ctx context.Context, groupID, memberID string, instanceID *string, generation int32, commits []Commit) []error {
	out := make([]error, len(commits))
	all := func(err error) []error {
		for i := range out {
			out[i] = err
		}
		return out
	}
	c.mu.Lock()
	now := c.cfg.Now()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		c.mu.Unlock()
		return all(err)
	case g == nil && generation >= 0:
		c.mu.Unlock()
		return all(kerr.IllegalGeneration)
	case g == nil:
		g = c.getOrCreate(groupID, now)
	}
	if err := g.ValidateCommit(memberID, instanceID, generation, now); err != nil {
		c.mu.Unlock()
		return all(err)
	}
	recs, idx := c.offsetRecords(groupID, commits, now, out)
	if len(recs) == 0 {
		c.mu.Unlock()
		return out
	}
	wait, base, err := c.append(c.PartitionFor(groupID), recs, now)
	if err == nil {
		for _, i := range idx {
			g.CommitInFlight(commits[i].TP, 1)
		}
	}
	c.mu.Unlock()
	if err == nil {
		err = c.await(ctx, wait)
		c.mu.Lock()
		for _, i := range idx {
			g.CommitInFlight(commits[i].TP, -1)
		}
	} else {
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	for j, i := range idx {
		out[i] = err
		if err == nil && c.groups[groupID] == g && g.State() != Dead {
			cm := commits[i]
			g.ApplyOffset(cm.TP, Offset{Offset: cm.Offset, LeaderEpoch: cm.LeaderEpoch, Metadata: cm.Metadata,
				CommitTime: now}, base+int64(j))
		}
	}
	return out
}

// Fetched is one partition of an OffsetFetch answer.
type Fetched struct {
	TP     TP
	Offset Offset // Offset -1 when nothing is committed
	Err    error  // UNSTABLE_OFFSET_COMMIT (require_stable)
}

// FetchOffsets returns the committed offsets of tps, or all of the group's
// when tps is nil.
func (c *Coordinator) FetchOffsets(groupID string, tps []TP) ([]Fetched, error) {
	return c.FetchStable(groupID, tps, false)
}

// FetchStable is FetchOffsets with OffsetFetch v7+'s require_stable: a
// partition with a pending transactional offset answers
// UNSTABLE_OFFSET_COMMIT and offset -1 (Kafka's getOffsets), which the
// client retries until the transaction ends.
func (c *Coordinator) FetchStable(groupID string, tps []TP, requireStable bool) ([]Fetched, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.lookup(groupID)
	if err != nil {
		return nil, err
	}
	unstable := func(f *Fetched) {
		if requireStable && g.PendingOffset(f.TP) {
			f.Offset, f.Err = Offset{Offset: -1, LeaderEpoch: -1}, kerr.UnstableOffsetCommit
		}
	}
	if tps == nil {
		if g == nil {
			return nil, nil
		}
		var out []Fetched
		for tp, o := range g.offsets {
			out = append(out, Fetched{TP: tp, Offset: o})
			unstable(&out[len(out)-1])
		}
		slices.SortFunc(out, func(a, b Fetched) int {
			return cmp.Or(strings.Compare(a.TP.Topic, b.TP.Topic), cmp.Compare(a.TP.Partition, b.TP.Partition))
		})
		return out, nil
	}
	out := make([]Fetched, len(tps))
	for i, tp := range tps {
		out[i] = Fetched{TP: tp, Offset: Offset{Offset: -1, LeaderEpoch: -1}}
		if g != nil {
			if o, ok := g.offsets[tp]; ok {
				out[i].Offset = o
			}
			unstable(&out[i])
		}
	}
	return out, nil
}

// DeleteOffsets removes committed offsets of a group (OffsetDelete): a
// group-wide error, or one per partition. ctx is the request's (see
// await).
func (c *Coordinator) DeleteOffsets(ctx context.Context, groupID string, tps []TP) (error, []error) {
	c.mu.Lock()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		c.mu.Unlock()
		return err, nil
	case g == nil || g.State() == Dead:
		c.mu.Unlock()
		return kerr.GroupIDNotFound, nil
	case g.State() != Empty && g.ProtocolType != "consumer":
		c.mu.Unlock()
		return kerr.NonEmptyGroup, nil
	}
	out := make([]error, len(tps))
	now := c.cfg.Now()
	var recs []record.KV
	for i, tp := range tps {
		if g.Subscribed(tp.Topic, subscribedTopics) {
			out[i] = kerr.GroupSubscribedToTopic
			continue
		}
		recs = append(recs, OffsetRecord(groupID, tp, nil))
		g.DeleteOffset(tp)
	}
	var wait func(context.Context) error
	if len(recs) > 0 {
		wait, _, err = c.append(c.PartitionFor(groupID), recs, now)
	}
	c.mu.Unlock()
	if err == nil && wait != nil {
		err = c.await(ctx, wait)
	}
	return err, out
}

// subscribedTopics reads the topics of a consumer protocol subscription.
func subscribedTopics(metadata []byte) []string {
	var m kmsg.ConsumerMemberMetadata
	if m.ReadFrom(metadata) != nil {
		return nil
	}
	return m.Topics
}

// expire drops the offsets retention expired and the groups left Empty
// without offsets, writing their tombstones.
func (c *Coordinator) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	for id, g := range c.groups {
		if ps := c.parts[c.PartitionFor(id)]; ps == nil || ps.loading {
			continue
		}
		var recs []record.KV
		for _, tp := range g.ExpiredOffsets(now, c.cfg.Retention) {
			recs = append(recs, OffsetRecord(id, tp, nil))
			g.DeleteOffset(tp)
		}
		if len(recs) > 0 {
			if _, _, err := c.append(c.PartitionFor(id), recs, now); err != nil {
				c.log.Warn("writing expired offsets' tombstones failed", "group", id, "err", err)
			}
			c.log.Info("expired offsets", "group", id, "partitions", len(recs))
		}
		if g.Removable() {
			if _, err := c.removeGroupLocked(g); err != nil {
				c.log.Warn("removing empty group failed", "group", id, "err", err)
			}
		}
	}
}

// PartitionsDeleted drops the committed offsets of deleted partitions from
// every loaded group, writing their tombstones; groups left Empty without
// offsets are removed.
func (c *Coordinator) PartitionsDeleted(tps []TP) {
	gone := make(map[TP]bool, len(tps))
	for _, tp := range tps {
		gone[tp] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	for id, g := range c.groups {
		var recs []record.KV
		for tp := range g.offsets {
			if gone[tp] {
				recs = append(recs, OffsetRecord(id, tp, nil))
				g.DeleteOffset(tp)
			}
		}
		for tp := range g.pendingTxnTPs() { // pending only: Kafka's removeOffsets drops them too
			if gone[tp] {
				recs = append(recs, OffsetRecord(id, tp, nil))
				g.DeleteOffset(tp)
			}
		}
		if len(recs) == 0 {
			continue
		}
		if _, _, err := c.append(c.PartitionFor(id), recs, now); err != nil {
			c.log.Warn("writing deleted partitions' offset tombstones failed", "group", id, "err", err)
		}
		if g.Removable() {
			if _, err := c.removeGroupLocked(g); err != nil {
				c.log.Warn("removing empty group failed", "group", id, "err", err)
			}
		}
	}
}

package group

// The group APIs on the coordinator: each finds the group (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS), calls its core under the lock and, for
// JoinGroup and SyncGroup, waits for the answer the core gives later.

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/record"
)

// Join handles a JoinGroup and waits for its answer (or ctx's end: nil
// error and a zero result mean the connection is going away).
func (c *Coordinator) Join(ctx context.Context, groupID string, req JoinRequest) JoinResult {
	if groupID == "" {
		return JoinResult{MemberID: req.MemberID, Err: kerr.InvalidGroupID}
	}
	ch := make(chan JoinResult, 1)
	c.mu.Lock()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		c.mu.Unlock()
		return JoinResult{MemberID: req.MemberID, Err: err}
	case g == nil && req.MemberID != "":
		c.mu.Unlock()
		return JoinResult{MemberID: req.MemberID, Err: kerr.UnknownMemberID}
	case g == nil:
		g = c.getOrCreate(groupID, c.cfg.Now())
	}
	g.Join(req, c.cfg.Now(), func(r JoinResult) { ch <- r })
	// Waiting for the rebalance is not the request's time; parked before
	// the lock goes, as nothing can answer before.
	defer quota.Parked(ctx)()
	c.mu.Unlock()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return JoinResult{Err: ctx.Err()}
	}
}

// Sync handles a SyncGroup and waits for its answer.
func (c *Coordinator) Sync(ctx context.Context, groupID string, req SyncRequest) SyncResult {
	if groupID == "" {
		return SyncResult{Err: kerr.InvalidGroupID}
	}
	ch := make(chan SyncResult, 1)
	c.mu.Lock()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		c.mu.Unlock()
		return SyncResult{Err: err}
	case g == nil:
		c.mu.Unlock()
		return SyncResult{Err: kerr.UnknownMemberID}
	}
	g.Sync(req, c.cfg.Now(), func(r SyncResult) { ch <- r })
	defer quota.Parked(ctx)() // nor waiting for the assignment, as in Join
	c.mu.Unlock()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return SyncResult{Err: ctx.Err()}
	}
}

// Heartbeat handles a Heartbeat.
func (c *Coordinator) Heartbeat(groupID, memberID string, instanceID *string, generation int32) error {
	if groupID == "" {
		return kerr.InvalidGroupID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		return err
	case g == nil:
		return kerr.UnknownMemberID
	}
	return g.Heartbeat(memberID, instanceID, generation, c.cfg.Now())
}

// Leave handles a LeaveGroup: a group-wide error, or one per member.
func (c *Coordinator) Leave(groupID string, members []LeaveMember) (error, []error) {
	if groupID == "" {
		return kerr.InvalidGroupID, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		return err, nil
	case g == nil:
		out := make([]error, len(members))
		for i := range out {
			out[i] = kerr.UnknownMemberID
		}
		return nil, out
	case g.State() == Dead:
		return kerr.CoordinatorNotAvailable, nil
	}
	return nil, g.Leave(members, c.cfg.Now())
}

// Description is a group as DescribeGroups shows it.
type Description struct {
	State        State
	Generation   int32
	ProtocolType string
	Protocol     string // "" unless Stable
	Members      []MemberDescription
}

// MemberDescription is one member of a Description.
type MemberDescription struct {
	MemberID, ClientID, ClientHost string
	InstanceID                     *string
	Metadata, Assignment           []byte // only when Stable
}

// Describe returns a group's description; an unknown group is Dead, as
// Kafka answers.
func (c *Coordinator) Describe(groupID string) (Description, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.lookup(groupID)
	if err != nil {
		return Description{}, err
	}
	if g == nil {
		return Description{State: Dead}, nil
	}
	d := Description{State: g.State(), Generation: g.Generation(), ProtocolType: g.ProtocolType}
	stable := g.State() == Stable
	if stable {
		d.Protocol = g.protocol
	}
	for _, m := range g.Members() {
		md := MemberDescription{MemberID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost, InstanceID: m.InstanceID}
		if stable {
			md.Metadata, md.Assignment = m.metadata(g.protocol), m.Assignment
		}
		d.Members = append(d.Members, md)
	}
	return d, nil
}

// Listing is one group of ListGroups.
type Listing struct {
	GroupID, ProtocolType string
	State                 State
}

// List returns the groups of the loaded partitions in the given states
// (all when none), sorted by id; loading partitions make it
// COORDINATOR_LOAD_IN_PROGRESS, as Kafka.
func (c *Coordinator) List(states []State) ([]Listing, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ps := range c.parts {
		if ps.loading {
			return nil, errLoading
		}
	}
	var out []Listing
	for id, g := range c.groups {
		if g.State() == Dead || (len(states) > 0 && !slices.Contains(states, g.State())) {
			continue
		}
		out = append(out, Listing{GroupID: id, ProtocolType: g.ProtocolType, State: g.State()})
	}
	slices.SortFunc(out, func(a, b Listing) int { return strings.Compare(a.GroupID, b.GroupID) })
	return out, nil
}

// DeleteGroup deletes an Empty group with its offsets, committed and
// pending in a transaction (tombstones for all), waiting for the write.
// ctx is the request's (see await).
func (c *Coordinator) DeleteGroup(ctx context.Context, groupID string) error {
	c.mu.Lock()
	g, err := c.lookup(groupID)
	switch {
	case err != nil:
		c.mu.Unlock()
		return err
	case g == nil:
		c.mu.Unlock()
		return kerr.GroupIDNotFound
	}
	if g.State() != Empty {
		c.mu.Unlock()
		if g.State() == Dead {
			return kerr.GroupIDNotFound
		}
		return kerr.NonEmptyGroup
	}
	wait, err := c.removeGroupLocked(g)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.await(ctx, wait)
}

// removeGroupLocked writes the tombstones of an Empty group and its
// offsets and removes it; c.mu held.
func (c *Coordinator) removeGroupLocked(g *Group) (func(context.Context) error, error) {
	now := c.cfg.Now()
	recs := []record.KV{GroupRecord(g, nil, now, true)}
	for tp := range g.offsets {
		recs = append(recs, OffsetRecord(g.ID, tp, nil))
	}
	for tp := range g.pendingTxnTPs() { // Kafka's deleteAllOffsets: pending ones too
		if _, ok := g.offsets[tp]; !ok {
			recs = append(recs, OffsetRecord(g.ID, tp, nil))
		}
	}
	wait, _, err := c.append(c.PartitionFor(g.ID), recs, now)
	if err != nil {
		return nil, err
	}
	if err := g.Delete(now); err != nil {
		return nil, err
	}
	c.forgetTxnGroup(g)
	delete(c.groups, g.ID)
	return wait, nil
}

package group

// SyncGroup, Heartbeat and LeaveGroup, as Kafka's GroupCoordinator:
//
//   - Dead group: COORDINATOR_NOT_AVAILABLE; fenced static member:
//     FENCED_INSTANCE_ID; unknown member: UNKNOWN_MEMBER_ID; another
//     generation: ILLEGAL_GENERATION
//   - SyncGroup with a protocol type or name other than the group's:
//     INCONSISTENT_GROUP_PROTOCOL; in PreparingRebalance:
//     REBALANCE_IN_PROGRESS; in CompletingRebalance the answer waits for
//     the leader's assignment, which is persisted before anyone is answered
//     (a failed write answers the error and rebalances); in Stable the
//     member gets its assignment at once
//   - Heartbeat in PreparingRebalance: REBALANCE_IN_PROGRESS (the member
//     must rejoin); in CompletingRebalance and Stable: no error; every
//     accepted heartbeat extends the member's session
//   - LeaveGroup removes members by member id, or by instance id alone
//     (administrative removal, KIP-345); the group rebalances

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// SyncRequest is one SyncGroup.
type SyncRequest struct {
	MemberID     string
	InstanceID   *string
	Generation   int32
	ProtocolType *string // v5+
	Protocol     *string // v5+
	Assignments  map[string][]byte
}

// checkMember is the validation Sync, Heartbeat and offset commits share.
func (g *Group) checkMember(id string, instanceID *string, generation int32) error {
	switch {
	case g.state == Dead:
		return kerr.CoordinatorNotAvailable
	case g.fenced(instanceID, id):
		return kerr.FencedInstanceID
	case g.members[id] == nil:
		return kerr.UnknownMemberID
	case generation != g.generation:
		return kerr.IllegalGeneration
	}
	return nil
}

// Sync handles a SyncGroup; cb is called once, perhaps later.
func (g *Group) Sync(req SyncRequest, now time.Time, cb func(SyncResult)) {
	fail := func(err error) { cb(SyncResult{Err: err}) }
	if err := g.checkMember(req.MemberID, req.InstanceID, req.Generation); err != nil {
		fail(err)
		return
	}
	if (req.ProtocolType != nil && *req.ProtocolType != g.ProtocolType) || (req.Protocol != nil && *req.Protocol != g.protocol) {
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case Empty:
		fail(kerr.UnknownMemberID)
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress)
	case Stable:
		delete(g.pendingSync, m.ID)
		m.deadline = now.Add(m.SessionTimeout)
		cb(SyncResult{ProtocolType: g.ProtocolType, Protocol: g.protocol, Assignment: m.Assignment})
	case CompletingRebalance:
		m.syncCB = cb
		delete(g.pendingSync, m.ID)
		if m.ID == g.leader {
			g.storeAssignment(req.Assignments, now)
		}
	}
}

// storeAssignment persists the leader's assignment (members it left out
// get an empty one), then hands it out and makes the group Stable.
func (g *Group) storeAssignment(assignment map[string][]byte, now time.Time) {
	full := make(map[string][]byte, len(g.members))
	for id := range g.members {
		full[id] = assignment[id]
		if full[id] == nil {
			full[id] = []byte{}
		}
	}
	gen := g.generation
	g.persist(g, full, func(err error) {
		if g.state != CompletingRebalance || g.generation != gen {
			return
		}
		if err != nil {
			g.propagate(nil, err, now)
			g.maybePrepareRebalance(now)
			return
		}
		g.propagate(full, nil, now)
		g.transition(Stable, now)
	})
}

// propagate sets every member's assignment (nil: reset) and answers the
// waiting SyncGroups.
func (g *Group) propagate(assignment map[string][]byte, err error, now time.Time) {
	for _, id := range g.order {
		m := g.members[id]
		m.Assignment = assignment[id]
		m.answerSync(SyncResult{Err: err, ProtocolType: g.ProtocolType, Protocol: g.protocol, Assignment: m.Assignment})
		m.deadline = now.Add(m.SessionTimeout)
	}
}

// Heartbeat handles a Heartbeat and returns its error.
func (g *Group) Heartbeat(id string, instanceID *string, generation int32, now time.Time) error {
	if err := g.checkMember(id, instanceID, generation); err != nil {
		return err
	}
	m := g.members[id]
	switch g.state {
	case Empty:
		return kerr.UnknownMemberID
	case PreparingRebalance:
		m.deadline = now.Add(m.SessionTimeout)
		return kerr.RebalanceInProgress
	}
	m.deadline = now.Add(m.SessionTimeout)
	return nil
}

// LeaveMember is one member of a LeaveGroup.
type LeaveMember struct {
	MemberID   string
	InstanceID *string
}

// Leave removes members and returns an error per member (nil: left).
func (g *Group) Leave(members []LeaveMember, now time.Time) []error {
	out := make([]error, len(members))
	for i, lm := range members {
		out[i] = g.leaveOne(lm, now)
	}
	return out
}

func (g *Group) leaveOne(lm LeaveMember, now time.Time) error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if lm.MemberID == "" {
		if lm.InstanceID == nil {
			return kerr.UnknownMemberID
		}
		id, ok := g.static[*lm.InstanceID]
		if !ok {
			return kerr.UnknownMemberID
		}
		g.removeAndUpdate(g.members[id], now)
		return nil
	}
	if _, ok := g.pending[lm.MemberID]; ok {
		delete(g.pending, lm.MemberID)
		g.maybeCompleteJoin(now)
		return nil
	}
	if g.fenced(lm.InstanceID, lm.MemberID) {
		return kerr.FencedInstanceID
	}
	m := g.members[lm.MemberID]
	if m == nil {
		return kerr.UnknownMemberID
	}
	g.removeAndUpdate(m, now)
	return nil
}

// removeAndUpdate drops a member that left or expired and rebalances
// (Kafka's removeMemberAndUpdateGroup).
func (g *Group) removeAndUpdate(m *Member, now time.Time) {
	m.answerJoin(JoinResult{Err: kerr.UnknownMemberID})
	m.answerSync(SyncResult{Err: kerr.UnknownMemberID})
	g.remove(m.ID)
	switch g.state {
	case Stable, CompletingRebalance:
		g.maybePrepareRebalance(now)
	case PreparingRebalance:
		g.maybeCompleteJoin(now)
	}
}

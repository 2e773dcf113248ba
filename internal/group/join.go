package group

// JoinGroup, as Kafka's GroupCoordinator.handleJoinGroup:
//
//   - session timeout outside group.min/max.session.timeout.ms: INVALID_SESSION_TIMEOUT
//   - a known member id the group has not: UNKNOWN_MEMBER_ID
//   - a new member when the group is full (group.max.size): GROUP_MAX_SIZE_REACHED
//   - a protocol type or protocol list the group cannot take: INCONSISTENT_GROUP_PROTOCOL
//   - a new dynamic member at v4+ (KIP-394): a member id is handed out with
//     MEMBER_ID_REQUIRED, and the member is pending until it joins with it
//     (or its session timeout passes)
//   - a new static member (KIP-345) whose instance id is known replaces the
//     old member id; in a Stable group whose protocol would not change it
//     gets the current generation back without a rebalance
//   - otherwise the member (re)joins and the group prepares a rebalance; the
//     answer waits until the join phase completes (timers.go)

import (
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
)

// JoinRequest is one JoinGroup.
type JoinRequest struct {
	MemberID           string
	InstanceID         *string
	ClientID           string
	ClientHost         string
	RebalanceTimeout   time.Duration
	SessionTimeout     time.Duration
	ProtocolType       string
	Protocols          []Protocol
	RequireKnownMember bool // v4+ without an instance id
	SupportsSkip       bool // v9+
}

// Join handles a JoinGroup; cb is called once with the answer, perhaps
// later (when the join phase completes).
func (g *Group) Join(req JoinRequest, now time.Time, cb func(JoinResult)) {
	fail := func(err error) { cb(JoinResult{MemberID: req.MemberID, Err: err}) }
	if req.SessionTimeout < g.cfg.MinSessionTimeout || req.SessionTimeout > g.cfg.MaxSessionTimeout {
		fail(kerr.InvalidSessionTimeout)
		return
	}
	if !g.acceptJoining(req.MemberID) {
		cb(JoinResult{Err: kerr.GroupMaxSizeReached})
		return
	}
	if req.MemberID == "" {
		g.joinNew(req, now, cb)
	} else {
		g.joinCurrent(req, now, cb)
	}
	if g.state == PreparingRebalance {
		g.maybeCompleteJoin(now)
	}
}

// acceptJoining is Kafka's acceptJoiningMember.
func (g *Group) acceptJoining(id string) bool {
	switch g.state {
	case PreparingRebalance:
		m := g.members[id]
		return (m != nil && m.awaitingJoin()) || g.numAwaitingJoin() < g.cfg.MaxSize
	case CompletingRebalance, Stable:
		return g.members[id] != nil || len(g.members) < g.cfg.MaxSize
	}
	return true
}

func (g *Group) joinNew(req JoinRequest, now time.Time, cb func(JoinResult)) {
	switch {
	case g.state == Dead:
		cb(JoinResult{Err: kerr.CoordinatorNotAvailable})
		return
	case !g.supports(req.ProtocolType, req.Protocols):
		cb(JoinResult{Err: kerr.InconsistentGroupProtocol})
		return
	}
	id := newMemberID(req)
	switch {
	case req.InstanceID != nil:
		if old, ok := g.static[*req.InstanceID]; ok {
			g.replaceStatic(req, old, id, now, cb)
			return
		}
		g.addAndRebalance(req, id, now, cb)
	case req.RequireKnownMember:
		g.pending[id] = now.Add(req.SessionTimeout)
		cb(JoinResult{MemberID: id, Err: kerr.MemberIDRequired})
	default:
		g.addAndRebalance(req, id, now, cb)
	}
}

// newMemberID is Kafka's: the client id (or instance id) and a UUID.
func newMemberID(req JoinRequest) string {
	prefix := req.ClientID
	if req.InstanceID != nil {
		prefix = *req.InstanceID
	}
	return prefix + "-" + uuid.NewString()
}

func (g *Group) joinCurrent(req JoinRequest, now time.Time, cb func(JoinResult)) {
	id := req.MemberID
	fail := func(err error) { cb(JoinResult{MemberID: id, Err: err}) }
	switch {
	case g.state == Dead:
		fail(kerr.CoordinatorNotAvailable)
		return
	case !g.supports(req.ProtocolType, req.Protocols):
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	if _, ok := g.pending[id]; ok && req.InstanceID == nil {
		g.addAndRebalance(req, id, now, cb)
		return
	}
	if g.fenced(req.InstanceID, id) {
		fail(kerr.FencedInstanceID)
		return
	}
	m := g.members[id]
	if m == nil || (req.InstanceID != nil && g.static[*req.InstanceID] == "") {
		fail(kerr.UnknownMemberID)
		return
	}
	switch g.state {
	case PreparingRebalance:
		g.updateAndRebalance(m, req, now, cb)
	case CompletingRebalance:
		if m.matches(req.Protocols) {
			cb(g.joinResult(m))
			return
		}
		g.updateAndRebalance(m, req, now, cb)
	case Stable:
		if m.ID == g.leader || !m.matches(req.Protocols) {
			g.updateAndRebalance(m, req, now, cb)
			return
		}
		r := g.joinResult(m)
		r.Members = nil
		cb(r)
	default:
		fail(kerr.UnknownMemberID)
	}
}

func (g *Group) addAndRebalance(req JoinRequest, id string, now time.Time, cb func(JoinResult)) {
	m := &Member{ID: id, InstanceID: req.InstanceID, ClientID: req.ClientID, ClientHost: req.ClientHost,
		RebalanceTimeout: req.RebalanceTimeout, SessionTimeout: req.SessionTimeout,
		ProtocolType: req.ProtocolType, Protocols: req.Protocols, joinCB: cb, isNew: true, joinSince: now}
	if g.state == PreparingRebalance && g.generation == 0 {
		g.newAdded = true
	}
	g.add(m)
	g.maybePrepareRebalance(now)
}

func (g *Group) updateAndRebalance(m *Member, req JoinRequest, now time.Time, cb func(JoinResult)) {
	g.update(m, req, cb, now)
	g.maybePrepareRebalance(now)
}

func (g *Group) update(m *Member, req JoinRequest, cb func(JoinResult), now time.Time) {
	m.Protocols, m.RebalanceTimeout, m.SessionTimeout = req.Protocols, req.RebalanceTimeout, req.SessionTimeout
	m.ClientID, m.ClientHost = req.ClientID, req.ClientHost
	if cb != nil && m.joinCB == nil {
		m.joinSince = now
	}
	if cb != nil {
		m.joinCB = cb
	}
}

// replaceStatic gives a known static member its new member id (Kafka's
// updateStaticMemberAndRebalance).
func (g *Group) replaceStatic(req JoinRequest, oldID, newID string, now time.Time, cb func(JoinResult)) {
	oldLeader := g.leader
	m := g.members[oldID]
	m.answerJoin(JoinResult{MemberID: oldID, Err: kerr.FencedInstanceID})
	m.answerSync(SyncResult{Err: kerr.FencedInstanceID})
	oldProtocols, oldRebalance, oldSession := m.Protocols, m.RebalanceTimeout, m.SessionTimeout
	g.rename(m, newID)
	m.deadline = now.Add(req.SessionTimeout)
	g.update(m, req, nil, now)
	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocol {
			m.joinCB, m.joinSince = cb, now
			g.prepareRebalance(now)
			return
		}
		g.persist(g, g.Assignments(), func(err error) {
			if err != nil {
				m.Protocols, m.RebalanceTimeout, m.SessionTimeout = oldProtocols, oldRebalance, oldSession
				if g.members[newID] == m {
					g.rename(m, oldID)
				}
				cb(JoinResult{Err: err, Generation: g.generation, ProtocolType: g.ProtocolType,
					Protocol: g.protocol, Leader: oldLeader})
				return
			}
			r := g.joinResult(m)
			if req.SupportsSkip {
				r.SkipAssignment = m.ID == g.leader
			} else {
				r.Members, r.Leader = nil, oldLeader
			}
			cb(r)
		})
	case CompletingRebalance:
		m.joinCB, m.joinSince = cb, now
		g.prepareRebalance(now)
	default: // PreparingRebalance
		m.joinCB, m.joinSince = cb, now
	}
}

// rename moves a member to a new id, keeping its place and its leadership.
func (g *Group) rename(m *Member, newID string) {
	oldID := m.ID
	delete(g.members, oldID)
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	m.ID = newID
	g.members[newID] = m
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	if m.InstanceID != nil {
		g.static[*m.InstanceID] = newID
	}
}

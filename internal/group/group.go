package group

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Config is the broker's group settings (group.*).
type Config struct {
	MinSessionTimeout     time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout     time.Duration // group.max.session.timeout.ms
	InitialRebalanceDelay time.Duration // group.initial.rebalance.delay.ms
	MaxSize               int           // group.max.size
}

// Persist writes the group's metadata with the given assignments (member
// id to assignment) to the log; the owner calls done with the write's
// outcome, later, with the group's lock held.
type Persist func(g *Group, assignment map[string][]byte, done func(error))

// Group is one classic group (Kafka's GroupMetadata), with its committed
// offsets.
type Group struct {
	ID           string
	cfg          *Config
	persist      Persist
	state        State
	stateTime    time.Time
	ProtocolType string // "" until the first member (or for commit-only groups)
	protocol     string // selected for the current generation
	generation   int32
	leader       string
	members      map[string]*Member
	order        []string             // member ids in join order (deterministic iteration)
	pending      map[string]time.Time // KIP-394: member ids handed out, with their expiry
	static       map[string]string    // group.instance.id -> member id
	pendingSync  map[string]bool
	join         joinTimer
	syncDeadline time.Time // zero: no pending sync
	newAdded     bool

	offsets map[TP]Offset
	// pendingTxn: transactional offsets (TxnOffsetCommit) written but not
	// yet committed or aborted by their producer's marker, per producer
	// id (Kafka's pendingTransactionalOffsetCommits); txn.go.
	pendingTxn map[int64]map[TP]Offset
	// inflight: plain OffsetCommit writes not yet committed, per partition
	// (Kafka's pendingOffsetCommits), for require_stable.
	inflight map[TP]int
}

// NewGroup returns an Empty group; persist may be nil (no writes).
func NewGroup(id string, cfg *Config, persist Persist, now time.Time) *Group {
	if persist == nil {
		persist = func(_ *Group, _ map[string][]byte, done func(error)) { done(nil) }
	}
	return &Group{ID: id, cfg: cfg, persist: persist, stateTime: now, members: map[string]*Member{},
		pending: map[string]time.Time{}, static: map[string]string{}, pendingSync: map[string]bool{},
		offsets: map[TP]Offset{}}
}

// State is the group's state.
func (g *Group) State() State { return g.state }

// StateTime is when the group entered its state.
func (g *Group) StateTime() time.Time { return g.stateTime }

// Generation is the group's generation id.
func (g *Group) Generation() int32 { return g.generation }

// Protocol is the protocol selected for the generation ("" when Empty).
func (g *Group) Protocol() string { return g.protocol }

// Leader is the leader's member id ("" when none).
func (g *Group) Leader() string { return g.leader }

// Members returns the members in join order.
func (g *Group) Members() []*Member {
	out := make([]*Member, 0, len(g.order))
	for _, id := range g.order {
		out = append(out, g.members[id])
	}
	return out
}

// Size is the number of members.
func (g *Group) Size() int { return len(g.members) }

func (g *Group) transition(to State, now time.Time) {
	if !canTransition(g.state, to) {
		panic("group: illegal transition from " + g.state.String() + " to " + to.String())
	}
	g.state, g.stateTime = to, now
}

// supports reports whether a member of protocolType with protocols may
// join: a group with members needs the same type and one protocol every
// member supports (Kafka's supportsProtocols).
func (g *Group) supports(protocolType string, protocols []Protocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.ProtocolType {
		return false
	}
	for _, p := range protocols {
		if g.allSupport(p.Name) {
			return true
		}
	}
	return false
}

func (g *Group) allSupport(name string) bool {
	for _, m := range g.members {
		if !hasProtocol(m.Protocols, name) {
			return false
		}
	}
	return true
}

func hasProtocol(ps []Protocol, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol every member supports that most
// members prefer (ties: the first in the leader's, then join, order).
func (g *Group) selectProtocol() string {
	candidates := map[string]bool{}
	for _, id := range g.order {
		for _, p := range g.members[id].Protocols {
			if g.allSupport(p.Name) {
				candidates[p.Name] = true
			}
		}
	}
	votes := map[string]int{}
	var first []string
	for _, id := range g.order {
		v := g.members[id].vote(candidates)
		if votes[v] == 0 {
			first = append(first, v)
		}
		votes[v]++
	}
	best := ""
	for _, name := range first {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

// add makes m a member; the first member sets the protocol type and leads.
func (g *Group) add(m *Member) {
	if len(g.members) == 0 {
		g.ProtocolType = m.ProtocolType
	}
	if g.leader == "" {
		g.leader = m.ID
	}
	g.members[m.ID] = m
	g.order = append(g.order, m.ID)
	if m.InstanceID != nil {
		g.static[*m.InstanceID] = m.ID
	}
	delete(g.pending, m.ID)
}

// remove drops a member; a new leader is the first remaining one.
func (g *Group) remove(id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	delete(g.members, id)
	g.order = slices.DeleteFunc(g.order, func(s string) bool { return s == id })
	delete(g.pendingSync, id)
	if m.InstanceID != nil && g.static[*m.InstanceID] == id {
		delete(g.static, *m.InstanceID)
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// fenced reports a static member whose instance id is now held by another
// member id (FENCED_INSTANCE_ID).
func (g *Group) fenced(instanceID *string, memberID string) bool {
	if instanceID == nil {
		return false
	}
	cur, ok := g.static[*instanceID]
	return ok && cur != memberID
}

// rebalanceTimeout is the largest rebalance timeout of the members.
func (g *Group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.RebalanceTimeout)
	}
	return d
}

func (g *Group) numAwaitingJoin() int {
	n := 0
	for _, m := range g.members {
		if m.awaitingJoin() {
			n++
		}
	}
	return n
}

func (g *Group) allJoined() bool {
	return len(g.members) == g.numAwaitingJoin() && len(g.pending) == 0
}

// leaderMembers is what the leader gets in its JoinGroup answer.
func (g *Group) leaderMembers() []MemberMetadata {
	out := make([]MemberMetadata, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		out = append(out, MemberMetadata{MemberID: id, InstanceID: m.InstanceID, Metadata: m.metadata(g.protocol)})
	}
	return out
}

func (g *Group) joinResult(m *Member) JoinResult {
	r := JoinResult{MemberID: m.ID, Generation: g.generation, ProtocolType: g.ProtocolType,
		Protocol: g.protocol, Leader: g.leader}
	if m.ID == g.leader {
		r.Members = g.leaderMembers()
	}
	return r
}

func (m *Member) answerJoin(r JoinResult) {
	if cb := m.joinCB; cb != nil {
		m.joinCB = nil
		m.isNew = false
		cb(r)
	}
}

func (m *Member) answerSync(r SyncResult) {
	if cb := m.syncCB; cb != nil {
		m.syncCB = nil
		cb(r)
	}
}

// Assignments returns every member's current assignment.
func (g *Group) Assignments() map[string][]byte {
	out := make(map[string][]byte, len(g.members))
	for id, m := range g.members {
		out[id] = m.Assignment
	}
	return out
}

// Shutdown makes the group Dead (unloaded or deleted), answering every
// waiting request with NOT_COORDINATOR (Kafka's onGroupUnloaded).
func (g *Group) Shutdown(now time.Time) {
	g.transition(Dead, now)
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		m.answerJoin(JoinResult{MemberID: id, Err: kerr.NotCoordinator})
		m.answerSync(SyncResult{Err: kerr.NotCoordinator})
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

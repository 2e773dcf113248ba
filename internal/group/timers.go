package group

// The group's timers, as Kafka's purgatories: the join phase (DelayedJoin,
// and InitialDelayedJoin for a group that was Empty, which waits
// group.initial.rebalance.delay.ms and again for as long as new members
// keep arriving, within the rebalance timeout), the pending sync
// (DelayedSync: members that have not sent SyncGroup within the rebalance
// timeout are removed), the members' sessions (DelayedHeartbeat) and the
// pending member ids of KIP-394. Tick fires whichever have passed.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// joinTimer is the join phase's delayed operation.
type joinTimer struct {
	deadline  time.Time // zero: none
	initial   bool      // InitialDelayedJoin: completes only at its deadline
	remaining time.Duration
}

// maybePrepareRebalance starts a rebalance if the state allows one.
func (g *Group) maybePrepareRebalance(now time.Time) {
	if canTransition(g.state, PreparingRebalance) {
		g.prepareRebalance(now)
	}
}

func (g *Group) prepareRebalance(now time.Time) {
	if g.state == CompletingRebalance {
		g.propagate(nil, kerr.RebalanceInProgress, now)
	}
	g.syncDeadline = time.Time{}
	rt := g.rebalanceTimeout()
	if d := g.cfg.InitialRebalanceDelay; g.state == Empty && d > 0 {
		g.join = joinTimer{deadline: now.Add(d), initial: true, remaining: max(rt-d, 0)}
	} else {
		g.join = joinTimer{deadline: now.Add(rt)}
	}
	g.transition(PreparingRebalance, now)
	// Tried at once, as Kafka's tryCompleteElseWatch tries its DelayedJoin:
	// a group whose last member left completes the join with none and is
	// Empty now, not at the next tick.
	g.maybeCompleteJoin(now)
}

// maybeCompleteJoin completes the join phase early once every member has
// rejoined (DelayedJoin.tryComplete; the initial delay never completes
// early).
func (g *Group) maybeCompleteJoin(now time.Time) {
	if g.state == PreparingRebalance && !g.join.initial && g.allJoined() {
		g.completeJoin(now)
	}
}

// completeJoin ends the join phase (Kafka's onCompleteJoin): dynamic
// members that did not rejoin are dropped, a new generation starts and
// every waiting member gets its answer.
func (g *Group) completeJoin(now time.Time) {
	g.join = joinTimer{}
	for _, m := range g.Members() {
		if !m.awaitingJoin() && !m.Static() {
			g.remove(m.ID)
		}
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		// Static members have yet to rejoin: wait another rebalance
		// timeout for them (or their sessions) before completing.
		g.join = joinTimer{deadline: now.Add(g.rebalanceTimeout())}
		return
	}
	g.nextGeneration(now)
	if g.state == Empty {
		g.persist(g, nil, func(error) {})
		return
	}
	for _, m := range g.Members() {
		m.deadline = now.Add(m.SessionTimeout)
		m.answerJoin(g.joinResult(m))
	}
	g.syncDeadline = now.Add(g.rebalanceTimeout())
}

// electJoinedLeader makes a member that rejoined the leader if the leader
// did not; false when no member rejoined.
func (g *Group) electJoinedLeader() bool {
	if m := g.members[g.leader]; m != nil && m.awaitingJoin() {
		return true
	}
	for _, id := range g.order {
		if g.members[id].awaitingJoin() {
			g.leader = id
			return true
		}
	}
	return false
}

// nextGeneration is Kafka's initNextGeneration.
func (g *Group) nextGeneration(now time.Time) {
	g.generation++
	g.pendingSync = map[string]bool{}
	if len(g.members) == 0 {
		g.protocol = ""
		g.transition(Empty, now)
		return
	}
	g.protocol = g.selectProtocol()
	for id := range g.members {
		g.pendingSync[id] = true
	}
	g.transition(CompletingRebalance, now)
}

// Tick fires the timers that have passed by now.
func (g *Group) Tick(now time.Time) {
	if g.state == Dead {
		return
	}
	for id, until := range g.pending {
		if !now.Before(until) {
			delete(g.pending, id)
			g.maybeCompleteJoin(now)
		}
	}
	for _, m := range g.Members() {
		if g.members[m.ID] == m && !m.alive(now) {
			g.removeAndUpdate(m, now)
		}
	}
	if !g.join.deadline.IsZero() && !now.Before(g.join.deadline) && g.state == PreparingRebalance {
		g.expireJoin(now)
	}
	if !g.syncDeadline.IsZero() && !now.Before(g.syncDeadline) {
		g.expireSync(now)
	}
}

func (g *Group) expireJoin(now time.Time) {
	j := g.join
	if j.initial && g.newAdded && j.remaining > 0 {
		g.newAdded = false
		d := min(g.cfg.InitialRebalanceDelay, j.remaining)
		g.join = joinTimer{deadline: now.Add(d), initial: true, remaining: j.remaining - d}
		return
	}
	g.completeJoin(now)
}

// expireSync removes the members that did not send SyncGroup in time
// and rebalances (Kafka's onExpirePendingSync).
func (g *Group) expireSync(now time.Time) {
	g.syncDeadline = time.Time{}
	if (g.state != CompletingRebalance && g.state != Stable) || len(g.pendingSync) == 0 {
		return
	}
	for _, id := range sortedKeys(g.pendingSync) {
		if m := g.members[id]; m != nil {
			m.answerSync(SyncResult{Err: kerr.UnknownMemberID})
		}
		g.remove(id)
	}
	g.prepareRebalance(now)
}

// NextDeadline is the earliest time Tick has something to do (zero: none).
func (g *Group) NextDeadline() time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	consider(g.join.deadline)
	consider(g.syncDeadline)
	for _, t := range g.pending {
		consider(t)
	}
	for _, m := range g.members {
		if !m.awaitingJoin() && !m.awaitingSync() {
			consider(m.deadline)
		} else if m.awaitingJoin() && m.isNew {
			consider(m.joinSince.Add(NewMemberJoinTimeout))
		}
	}
	return next
}

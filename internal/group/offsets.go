package group

// Committed offsets, as Kafka's GroupMetadata keeps them: a commit is
// validated against the group (validateOffsetCommit), written to the log,
// and applied once the write is committed; a commit of an older log
// position never overwrites a newer one.
//
// Validation (Kafka's handleCommitOffsets):
//   - Dead: COORDINATOR_NOT_AVAILABLE
//   - a generation >= 0, a member id or an instance id: the member must be
//     current (FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID) and the generation
//     the group's (ILLEGAL_GENERATION)
//   - none of them (a consumer outside group management): only an Empty
//     group takes it (UNKNOWN_MEMBER_ID otherwise)
//   - CompletingRebalance: REBALANCE_IN_PROGRESS
//
// Expiry (offsets.retention.minutes): the offsets of a group with a
// protocol type expire once the group has been Empty that long; those of a
// group that only commits expire that long after their commit. A group
// left Empty without offsets is removed.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TP is a topic partition.
type TP struct {
	Topic     string
	Partition int32
}

// Offset is a committed offset.
type Offset struct {
	Offset      int64
	LeaderEpoch int32 // -1: unknown
	Metadata    string
	CommitTime  time.Time
	logOffset   int64 // position of the record in __consumer_offsets
}

// ValidateCommit checks an OffsetCommit against the group and extends the
// committing member's session.
func (g *Group) ValidateCommit(memberID string, instanceID *string, generation int32, now time.Time) error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if generation >= 0 || memberID != "" || instanceID != nil {
		if err := g.checkMember(memberID, instanceID, generation); err != nil {
			return err
		}
	} else if g.state != Empty {
		return kerr.UnknownMemberID
	}
	switch g.state {
	case CompletingRebalance:
		return kerr.RebalanceInProgress
	case Stable, PreparingRebalance:
		m := g.members[memberID]
		m.deadline = now.Add(m.SessionTimeout)
	}
	return nil
}

// ApplyOffset records a committed offset written at logOffset in the
// partition; it keeps the newer of two writes.
func (g *Group) ApplyOffset(tp TP, o Offset, logOffset int64) {
	if cur, ok := g.offsets[tp]; ok && cur.logOffset > logOffset {
		return
	}
	o.logOffset = logOffset
	g.offsets[tp] = o
}

// DeleteOffset forgets a committed offset, and any producer's pending
// one (a tombstone was written or read).
func (g *Group) DeleteOffset(tp TP) {
	delete(g.offsets, tp)
	if len(g.pendingTxn) > 0 {
		g.dropPendingTxn(tp)
	}
}

// Committed returns the committed offset of tp.
func (g *Group) Committed(tp TP) (Offset, bool) {
	o, ok := g.offsets[tp]
	return o, ok
}

// Offsets returns all committed offsets.
func (g *Group) Offsets() map[TP]Offset {
	out := make(map[TP]Offset, len(g.offsets))
	for tp, o := range g.offsets {
		out[tp] = o
	}
	return out
}

// HasOffsets reports whether anything is committed or pending in a
// transaction (Kafka's hasOffsets).
func (g *Group) HasOffsets() bool { return len(g.offsets) > 0 || len(g.pendingTxn) > 0 }

// ExpiredOffsets returns the offsets that retention has expired by now;
// one with a transactional offset pending does not expire yet (Kafka's
// cleanupExpiredOffsets).
func (g *Group) ExpiredOffsets(now time.Time, retention time.Duration) []TP {
	var out []TP
	switch {
	case g.ProtocolType != "" && g.state == Empty:
		if now.Sub(g.stateTime) >= retention {
			for tp := range g.offsets {
				if !g.pendingTxnHas(tp) {
					out = append(out, tp)
				}
			}
		}
	case g.ProtocolType == "":
		for tp, o := range g.offsets {
			if now.Sub(o.CommitTime) >= retention && !g.pendingTxnHas(tp) {
				out = append(out, tp)
			}
		}
	}
	return out
}

// Removable reports an Empty group without offsets, committed or pending
// in a transaction (it can go Dead).
func (g *Group) Removable() bool { return g.state == Empty && !g.HasOffsets() }

// Subscribed reports whether a member's subscription (consumer protocol)
// names topic; such offsets cannot be deleted (GROUP_SUBSCRIBED_TO_TOPIC).
func (g *Group) Subscribed(topic string, topics func(metadata []byte) []string) bool {
	if g.ProtocolType != "consumer" || g.state == Empty {
		return false
	}
	for _, m := range g.members {
		for _, t := range topics(m.metadata(g.protocol)) {
			if t == topic {
				return true
			}
		}
	}
	return false
}

// Delete makes an Empty group Dead (DeleteGroups): NON_EMPTY_GROUP when it
// has members.
func (g *Group) Delete(now time.Time) error {
	switch g.state {
	case Dead:
		return kerr.GroupIDNotFound
	case Empty:
		g.transition(Dead, now)
		return nil
	}
	return kerr.NonEmptyGroup
}

// MarkDead makes the group Dead (expired or unloaded).
func (g *Group) MarkDead(now time.Time) { g.Shutdown(now) }

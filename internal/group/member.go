package group

import (
	"bytes"
	"time"
)

// NewMemberJoinTimeout bounds how long a new member may wait in a
// JoinGroup before it is dropped (Kafka's NewMemberJoinTimeoutMs): it
// cannot heartbeat yet, and a client that gave up retries.
const NewMemberJoinTimeout = 5 * time.Minute

// Protocol is one (name, metadata) pair a member supports, in its order of
// preference.
type Protocol struct {
	Name     string
	Metadata []byte
}

// JoinResult answers a JoinGroup.
type JoinResult struct {
	Err          error // nil or a *kerr.Error
	MemberID     string
	Generation   int32
	ProtocolType string
	Protocol     string
	Leader       string
	// SkipAssignment tells a static leader rejoining a stable group that
	// it leads but must not assign (JoinGroup v9+).
	SkipAssignment bool
	Members        []MemberMetadata // for the leader only
}

// MemberMetadata is a member as the leader sees it in its JoinGroup answer.
type MemberMetadata struct {
	MemberID   string
	InstanceID *string
	Metadata   []byte
}

// SyncResult answers a SyncGroup.
type SyncResult struct {
	Err          error
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// Member is one member of a group (Kafka's MemberMetadata).
type Member struct {
	ID               string
	InstanceID       *string // static membership (KIP-345)
	ClientID         string
	ClientHost       string
	RebalanceTimeout time.Duration
	SessionTimeout   time.Duration
	ProtocolType     string
	Protocols        []Protocol
	Assignment       []byte

	joinCB    func(JoinResult)
	syncCB    func(SyncResult)
	isNew     bool
	deadline  time.Time // heartbeat expiry
	joinSince time.Time
}

func (m *Member) awaitingJoin() bool { return m.joinCB != nil }
func (m *Member) awaitingSync() bool { return m.syncCB != nil }

// Static reports a member with a group.instance.id.
func (m *Member) Static() bool { return m.InstanceID != nil }

// metadata returns the member's metadata for protocol, nil if it has none.
func (m *Member) metadata(protocol string) []byte {
	for _, p := range m.Protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// matches reports whether the member already joined with protocols.
func (m *Member) matches(protocols []Protocol) bool {
	if len(protocols) != len(m.Protocols) {
		return false
	}
	for i, p := range protocols {
		if p.Name != m.Protocols[i].Name || !bytes.Equal(p.Metadata, m.Protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// vote returns the member's most preferred protocol among candidates.
func (m *Member) vote(candidates map[string]bool) string {
	for _, p := range m.Protocols {
		if candidates[p.Name] {
			return p.Name
		}
	}
	return ""
}

// alive reports whether the member's session still holds at now: a member
// waiting in a JoinGroup (a new one for at most NewMemberJoinTimeout) or a
// SyncGroup does not heartbeat and is not expired (Kafka's shouldKeepAlive).
func (m *Member) alive(now time.Time) bool {
	switch {
	case m.awaitingJoin():
		return !m.isNew || now.Before(m.joinSince.Add(NewMemberJoinTimeout))
	case m.awaitingSync():
		return true
	}
	return now.Before(m.deadline)
}

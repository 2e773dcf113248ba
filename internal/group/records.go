package group

// The records of __consumer_offsets, with Kafka's schemas (franz-go's kmsg
// types): key version 0/1 is an offset commit (group, topic, partition),
// key version 2 is a group's metadata. Samsa writes offset keys at
// version 1 with values at version 3 (leader epoch, no expire timestamp),
// and group keys with values at version 3 (static members), as Kafka 2.3+
// does. A nil value is a tombstone.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
)

// ErrBadRecord is a record of __consumer_offsets that does not decode.
var ErrBadRecord = errors.New("group: undecodable __consumer_offsets record")

// OffsetRecord encodes a commit (o nil: its tombstone).
func OffsetRecord(group string, tp TP, o *Offset) record.KV {
	k := kmsg.NewOffsetCommitKey()
	k.Version, k.Group, k.Topic, k.Partition = 1, group, tp.Topic, tp.Partition
	kv := record.KV{Key: k.AppendTo(nil)}
	if o != nil {
		v := kmsg.NewOffsetCommitValue()
		v.Version, v.Offset, v.LeaderEpoch, v.Metadata = 3, o.Offset, o.LeaderEpoch, o.Metadata
		v.CommitTimestamp = o.CommitTime.UnixMilli()
		kv.Value = v.AppendTo(nil)
	}
	return kv
}

// GroupRecord encodes the group's metadata with the given assignments
// (deleted: its tombstone).
func GroupRecord(g *Group, assignment map[string][]byte, now time.Time, deleted bool) record.KV {
	k := kmsg.NewGroupMetadataKey()
	k.Version, k.Group = 2, g.ID
	kv := record.KV{Key: k.AppendTo(nil)}
	if deleted {
		return kv
	}
	v := kmsg.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation = 3, g.ProtocolType, g.generation
	v.CurrentStateTimestamp = now.UnixMilli()
	if g.protocol != "" {
		v.Protocol = &g.protocol
	}
	if g.leader != "" {
		v.Leader = &g.leader
	}
	for _, id := range g.order {
		m := g.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID, vm.InstanceID, vm.ClientID, vm.ClientHost = id, m.InstanceID, m.ClientID, m.ClientHost
		vm.RebalanceTimeoutMillis = int32(m.RebalanceTimeout.Milliseconds())
		vm.SessionTimeoutMillis = int32(m.SessionTimeout.Milliseconds())
		vm.Subscription = m.metadata(g.protocol)
		vm.Assignment = assignment[id]
		v.Members = append(v.Members, vm)
	}
	kv.Value = v.AppendTo(nil)
	return kv
}

// Decoded is one record of __consumer_offsets: an offset (Group, TP,
// Offset) or a group's metadata (Group, Meta); nil Offset and Meta are
// tombstones.
type Decoded struct {
	Group  string
	IsMeta bool
	TP     TP
	Offset *Offset
	Meta   *kmsg.GroupMetadataValue
}

// Decode reads one record's key and value.
func Decode(key, value []byte) (Decoded, error) {
	if len(key) < 2 {
		return Decoded{}, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(key))
	}
	switch ver := int16(key[0])<<8 | int16(key[1]); ver {
	case 0, 1:
		k := kmsg.NewOffsetCommitKey()
		if err := k.ReadFrom(key); err != nil {
			return Decoded{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
		}
		d := Decoded{Group: k.Group, TP: TP{k.Topic, k.Partition}}
		if value == nil {
			return d, nil
		}
		o, err := decodeOffsetValue(value)
		if err != nil {
			return Decoded{}, err
		}
		d.Offset = &o
		return d, nil
	case 2:
		k := kmsg.NewGroupMetadataKey()
		if err := k.ReadFrom(key); err != nil {
			return Decoded{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
		}
		d := Decoded{Group: k.Group, IsMeta: true}
		if value == nil {
			return d, nil
		}
		v := kmsg.NewGroupMetadataValue()
		if err := v.ReadFrom(value); err != nil {
			return Decoded{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
		}
		d.Meta = &v
		return d, nil
	default:
		return Decoded{}, fmt.Errorf("%w: key version %d", ErrBadRecord, ver)
	}
}

// decodeOffsetValue reads an offset commit's value.
func decodeOffsetValue(value []byte) (Offset, error) {
	v := kmsg.NewOffsetCommitValue()
	if err := v.ReadFrom(value); err != nil {
		return Offset{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	epoch := int32(-1)
	if v.Version >= 3 {
		epoch = v.LeaderEpoch
	}
	return Offset{Offset: v.Offset, LeaderEpoch: epoch, Metadata: v.Metadata,
		CommitTime: time.UnixMilli(v.CommitTimestamp)}, nil
}

// offsetKey reads an offset commit's key (versions 0 and 1: group, topic,
// partition) without copying: group and topic alias key. ok is false for
// any other key, and for one Decode would refuse.
func offsetKey(key []byte) (group, topic []byte, partition int32, ok bool) {
	if len(key) < 2 || key[0] != 0 || key[1] > 1 {
		return nil, nil, 0, false
	}
	b := key[2:]
	str := func() []byte {
		if len(b) < 2 {
			ok = false
			return nil
		}
		n := int(int16(binary.BigEndian.Uint16(b)))
		if n < 0 || len(b)-2 < n {
			ok = false
			return nil
		}
		s := b[2 : 2+n]
		b = b[2+n:]
		return s
	}
	ok = true
	group = str()
	if ok {
		topic = str()
	}
	if !ok || len(b) < 4 {
		return nil, nil, 0, false
	}
	return group, topic, int32(binary.BigEndian.Uint32(b)), true
}

// Restore rebuilds a group from its last metadata record, as Kafka's
// GroupMetadata.loadGroup: Empty without members, else Stable with every
// member's session starting at now.
func Restore(id string, cfg *Config, persist Persist, v *kmsg.GroupMetadataValue, now time.Time) *Group {
	g := NewGroup(id, cfg, persist, now)
	g.ProtocolType, g.generation = v.ProtocolType, v.Generation
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	if len(v.Members) == 0 {
		if v.CurrentStateTimestamp > 0 {
			g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
		}
		return g
	}
	for _, vm := range v.Members {
		m := &Member{ID: vm.MemberID, InstanceID: vm.InstanceID, ClientID: vm.ClientID, ClientHost: vm.ClientHost,
			RebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			SessionTimeout:   time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			ProtocolType:     v.ProtocolType, Assignment: vm.Assignment,
			Protocols: []Protocol{{Name: g.protocol, Metadata: vm.Subscription}}}
		if m.RebalanceTimeout <= 0 {
			m.RebalanceTimeout = m.SessionTimeout
		}
		m.deadline = now.Add(m.SessionTimeout)
		g.add(m)
	}
	if v.Leader != nil {
		g.leader = *v.Leader
	}
	g.state = Stable
	return g
}

package replica

import (
	"fmt"
	"slices"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// DeleteRecords (Kafka's Partition.deleteRecordsOnLeader and
// lowWatermarkIfLeader). The leader raises its log start offset; each
// follower raises its own to the leader's, carried in fetch responses, and
// reports it in its next fetch request (RecordFollowerLogStart); the
// request is done once the low watermark, the least log start offset over
// the ISR, reached the target. Kafka counts every replica on a live broker;
// Samsa counts the ISR, which the leader knows without the broker list.

// RaiseLogStartOffset raises a follower's log start offset to the leader's,
// no further than its high watermark (the leader's start is at most the
// leader's HW; ours catches up as we fetch). Ignored while leading.
func (p *Partition) RaiseLogStartOffset(leaderLogStart int64) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if p.state.role == Leader {
		return
	}
	if off := min(leaderLogStart, p.log.HighWatermark()); off > p.log.LogStartOffset() {
		_, _ = p.log.IncrementLogStartOffset(off) // only an offset above the HW fails
	}
}

// RecordFollowerLogStart records the log start offset follower id sent in
// a fetch request and wakes waiters when it moved (a DeleteRecords may be
// waiting on it). Ignored unless leading and id follows.
func (p *Partition) RecordFollowerLogStart(id int32, logStart int64) {
	p.roleMu.RLock()
	p.lmu.Lock()
	moved := false
	if f := p.lead.follower(id); f != nil && logStart >= 0 && f.logStart != logStart {
		f.logStart, moved = logStart, true
	}
	p.lmu.Unlock()
	p.roleMu.RUnlock()
	if moved {
		p.wakeAll()
	}
}

// DeleteRecords raises the leader's log start offset to offset (-1: the
// high watermark) and returns the offset the request waits for. ErrNotLeader
// unless leading; storage.ErrOffsetOutOfRange beyond the high watermark or
// below zero.
func (p *Partition) DeleteRecords(offset int64) (int64, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if !p.leadingLocked() {
		return -1, ErrNotLeader
	}
	hw := p.log.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, fmt.Errorf("%w: %d not in [0, %d]", storage.ErrOffsetOutOfRange, offset, hw)
	}
	if _, err := p.log.IncrementLogStartOffset(offset); err != nil {
		return -1, err
	}
	return offset, nil
}

// LowWatermark is the least log start offset over the ISR (the leader's
// own included); ErrNotLeader unless leading. A follower that has not
// reported one yet counts as 0.
func (p *Partition) LowWatermark() (int64, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if !p.leadingLocked() {
		return -1, ErrNotLeader
	}
	low := p.log.LogStartOffset()
	p.lmu.Lock()
	defer p.lmu.Unlock()
	if p.lead == nil {
		return low, nil
	}
	for _, f := range p.lead.followers {
		if slices.Contains(p.lead.isr, f.id) {
			low = min(low, max(f.logStart, 0))
		}
	}
	return low, nil
}

package replica

// The follower path, driven by the fetcher (internal/fetcher): replicated
// appends, the leader's high watermark, and the truncations that make the
// log a prefix of the leader's (KIP-101/279). A partition this broker leads
// refuses all of them with ErrNotFollower: a leader's log only grows, and
// its HW follows its ISR. Role changes wait for these calls in flight.

import (
	"fmt"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// AppendAsFollower appends batches fetched from the leader, offsets and
// leader epochs as the leader wrote them (the log records each new epoch).
// Each batch must be a well-framed v2 batch whose CRC matches
// (record.ErrCorrupt, record.ErrUnsupportedMagic); a partial batch at the end
// (a fetch cut at its size limit) is dropped. Without any whole batch
// nothing is appended and the result is empty (LastOffset = LEO-1).
func (p *Partition) AppendAsFollower(records []byte) (storage.AppendInfo, error) {
	hdrs, n, err := parseBatches(records)
	if err != nil {
		return storage.AppendInfo{}, err
	}
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if p.state.role == Leader {
		return storage.AppendInfo{}, ErrNotFollower
	}
	if len(hdrs) == 0 {
		leo := p.log.LogEndOffset()
		return storage.AppendInfo{FirstOffset: leo, LastOffset: leo - 1, LogAppendTime: -1,
			LogStartOffset: p.log.LogStartOffset()}, nil
	}
	return p.log.AppendAsFollower(records[:n], hdrs)
}

// parseBatches reads the headers of the whole v2 batches at the start of b
// and checks their CRC; n is the bytes they cover.
func parseBatches(b []byte) (hdrs []record.Header, n int, err error) {
	for n < len(b) {
		rest := b[n:]
		if len(rest) < record.HeaderSize {
			break
		}
		h, err := record.ReadHeader(rest)
		if err != nil {
			return nil, 0, fmt.Errorf("batch at byte %d: %w", n, err)
		}
		if h.Size() > len(rest) {
			break
		}
		if h.Magic != 2 {
			return nil, 0, fmt.Errorf("batch at byte %d: %w: magic %d", n, record.ErrUnsupportedMagic, h.Magic)
		}
		if !record.CheckCRC(rest[:h.Size()]) {
			return nil, 0, fmt.Errorf("batch at byte %d: %w: CRC mismatch", n, record.ErrCorrupt)
		}
		hdrs = append(hdrs, h)
		n += h.Size()
	}
	return hdrs, n, nil
}

// SetFollowerHighWatermark takes the HW the leader sent with a fetch: the
// HW becomes min(leaderHW, LEO), clamped to the log by storage; it follows
// the leader's, also downwards (a new leader's HW may lag), never past what
// the log holds. Ignored while leading.
func (p *Partition) SetFollowerHighWatermark(leaderHW int64) {
	p.roleMu.RLock()
	if p.state.role == Leader {
		p.roleMu.RUnlock()
		return
	}
	hw := min(leaderHW, p.log.LogEndOffset())
	changed := hw != p.log.HighWatermark()
	if changed {
		p.log.SetHighWatermark(hw)
	}
	p.roleMu.RUnlock()
	if changed {
		p.wakeHW()
	}
}

// TruncateTo removes the records at and above offset (whole batches) and
// wakes waiters; ErrNotFollower while leading.
func (p *Partition) TruncateTo(offset int64) error {
	return p.truncate(func() error { return p.log.TruncateTo(offset) })
}

// TruncateFullyAndStartAt empties the log and restarts it at offset (the
// leader's log start moved past this follower's end) and wakes waiters;
// ErrNotFollower while leading.
func (p *Partition) TruncateFullyAndStartAt(offset int64) error {
	return p.truncate(func() error { return p.log.TruncateFullyAndStartAt(offset) })
}

func (p *Partition) truncate(do func() error) error {
	p.roleMu.RLock()
	if p.state.role == Leader {
		p.roleMu.RUnlock()
		return ErrNotFollower
	}
	err := do()
	p.roleMu.RUnlock()
	p.wakeAll()
	return err
}

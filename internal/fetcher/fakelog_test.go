// fakeLog: an in-memory log of whole v2 batches with a leader-epoch cache,
// used as the follower Partition under test and as a fake leader's log. It
// follows the storage contract (TruncateTo is a no-op at or past the LEO,
// EndOffsetForEpoch is Kafka's endOffsetFor) and refuses partial batches and
// offset gaps, so a fetcher bug shows up as an error.
package fetcher

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/storage"
)

type fakeBatch struct {
	base, last int64
	data       []byte
}

type epochStart struct {
	epoch int32
	start int64
}

type fakeLog struct {
	mu        sync.Mutex
	batches   []fakeBatch
	logStart  int64
	epochs    []epochStart
	hw        int64
	truncs    []int64 // TruncateTo offsets
	resets    []int64 // TruncateFullyAndStartAt offsets
	appends   int
	forbidden bool // set once removed from the fetcher
	late      int  // mutating calls after forbidden
}

// batch builds one batch of values at base with leader epoch epoch.
func batch(base int64, epoch int32, values ...string) []byte {
	b := recordtest.Values(1000, values...)
	binary.BigEndian.PutUint64(b[0:], uint64(base))
	binary.BigEndian.PutUint32(b[12:], uint32(epoch))
	return b
}

// write appends a batch of values at the log end with leader epoch epoch.
func (l *fakeLog) write(epoch int32, values ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.appendLocked(batch(l.leoLocked(), epoch, values...))
}

func (l *fakeLog) leoLocked() int64 {
	if n := len(l.batches); n > 0 {
		return l.batches[n-1].last + 1
	}
	return l.logStart
}

func (l *fakeLog) appendLocked(b []byte) {
	base, last := batchOffsets(b)
	l.batches = append(l.batches, fakeBatch{base, last, bytes.Clone(b)})
	epoch := int32(binary.BigEndian.Uint32(b[12:]))
	if n := len(l.epochs); epoch >= 0 && (n == 0 || epoch > l.epochs[n-1].epoch) {
		l.epochs = append(l.epochs, epochStart{epoch, base})
	}
}

func (l *fakeLog) mutating() {
	if l.forbidden {
		l.late++
	}
}

func (l *fakeLog) LogEndOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leoLocked()
}

func (l *fakeLog) LogStartOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.logStart
}

func (l *fakeLog) LatestEpoch() (int32, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.epochs); n > 0 {
		return l.epochs[n-1].epoch, true
	}
	return -1, false
}

func (l *fakeLog) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.epochs)
	if epoch < 0 || n == 0 {
		return -1, -1
	}
	if epoch == l.epochs[n-1].epoch {
		return epoch, l.leoLocked()
	}
	hi := -1
	for i, e := range l.epochs {
		if e.epoch > epoch {
			hi = i
			break
		}
	}
	switch {
	case hi < 0:
		return -1, -1
	case hi == 0:
		return epoch, l.epochs[0].start
	default:
		return l.epochs[hi-1].epoch, l.epochs[hi].start
	}
}

func (l *fakeLog) AppendAsFollower(records []byte) (storage.AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mutating()
	if len(wholeBatches(records)) != len(records) || len(records) == 0 {
		return storage.AppendInfo{}, fmt.Errorf("fake: %d bytes are not whole batches", len(records))
	}
	info := storage.AppendInfo{FirstOffset: -1}
	for b := records; len(b) > 0; {
		n := batchOverhead + int(binary.BigEndian.Uint32(b[batchLengthAt:]))
		base, last := batchOffsets(b)
		if leo := l.leoLocked(); base != leo {
			return info, fmt.Errorf("fake: batch at %d appended at log end %d", base, leo)
		}
		l.appendLocked(b[:n])
		if info.FirstOffset < 0 {
			info.FirstOffset = base
		}
		info.LastOffset = last
		b = b[n:]
	}
	l.appends++
	return info, nil
}

func (l *fakeLog) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mutating()
	l.truncs = append(l.truncs, offset)
	if offset >= l.leoLocked() {
		return nil
	}
	for len(l.batches) > 0 && l.batches[len(l.batches)-1].last >= offset {
		l.batches = l.batches[:len(l.batches)-1]
	}
	leo := l.leoLocked()
	for len(l.epochs) > 0 && l.epochs[len(l.epochs)-1].start >= leo {
		l.epochs = l.epochs[:len(l.epochs)-1]
	}
	l.hw = min(l.hw, leo)
	return nil
}

func (l *fakeLog) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mutating()
	l.resets = append(l.resets, offset)
	l.batches, l.epochs, l.logStart, l.hw = nil, nil, offset, offset
	return nil
}

func (l *fakeLog) SetFollowerHighWatermark(hw int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mutating()
	l.hw = min(hw, l.leoLocked())
}

func (l *fakeLog) RaiseLogStartOffset(off int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logStart = max(l.logStart, min(off, l.hw))
}

// bytes is the whole log as stored.
func (l *fakeLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.batches {
		out = append(out, b.data...)
	}
	return out
}

// read is the leader side of a fetch: the batches from the one holding
// offset on, cut at maxBytes (possibly mid-batch, as Kafka's FileRecords
// slice), the first batch always whole (KIP-74).
func (l *fakeLog) read(offset int64, maxBytes int32) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.batches {
		if b.last < offset {
			continue
		}
		if len(out) >= int(maxBytes) {
			return out
		}
		if len(out) > 0 && len(out)+len(b.data) > int(maxBytes) {
			return append(out, b.data[:int(maxBytes)-len(out)]...)
		}
		out = append(out, b.data...)
	}
	return out
}

func (l *fakeLog) state() (hw, logStart, leo int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hw, l.logStart, l.leoLocked()
}

func (l *fakeLog) setHW(hw int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hw = hw
}

func (l *fakeLog) forbid() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forbidden = true
}

// stats returns the recorded truncations, resets, appends and late calls.
func (l *fakeLog) stats() (truncs, resets []int64, appends, late int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.truncs...), append([]int64(nil), l.resets...), l.appends, l.late
}

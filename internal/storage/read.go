package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/samsa-kafka/samsa/internal/record"
)

// ReadResult is the answer to a Read.
type ReadResult struct {
	Records                      []byte   // whole batches, as stored
	Section                      *Section // ReadSection's answer instead of Records (section.go)
	LogEndOffset, LogStartOffset int64
}

// Read returns whole batches starting with the one holding offset, only
// batches with BaseOffset < maxOffset, up to maxBytes in total; with
// minOneBatch a first batch larger than maxBytes is returned whole (KIP-74).
// It reads from one segment, with pread, and decodes no records. The
// records are in a pooled buffer that the caller may hand back with
// ReleaseRecords once nothing refers to them any more.
// offset == log end offset gives no records; below the start or beyond the
// end ErrOffsetOutOfRange.
func (l *Log) Read(offset, maxOffset int64, maxBytes int32, minOneBatch bool) (ReadResult, error) {
	if err := l.rlockLoaded(); err != nil {
		return ReadResult{}, err
	}
	defer l.mu.RUnlock()
	if l.lazy.Load() {
		return lazyRead(offset)
	}
	res := ReadResult{LogEndOffset: l.leo(), LogStartOffset: l.startLocked()}
	if offset < res.LogStartOffset || offset > res.LogEndOffset {
		return res, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, res.LogStartOffset, res.LogEndOffset)
	}
	for i := l.segmentFor(offset); i < len(l.segs) && offset < res.LogEndOffset; i++ {
		recs, found, err := l.readSegment(l.segs[i], offset, maxOffset, maxBytes, minOneBatch)
		if err != nil || found {
			res.Records = recs
			return res, err
		}
	}
	return res, nil
}

// segmentFor is the index of the last segment with base <= offset.
func (l *Log) segmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset })
	return max(i-1, 0)
}

// readSegment reads from s; found is false when s holds no batch ending at
// or after offset.
func (l *Log) readSegment(s *segment, offset, maxOffset int64, maxBytes int32, minOne bool) ([]byte, bool, error) {
	if err := s.acquire(); err != nil {
		return nil, false, err
	}
	defer s.release()
	f, pos := s.locate(offset)
	pos, h, found, err := seekBatch(f, pos, s.size, func(h record.Header) bool { return h.LastOffset() >= offset })
	if err != nil || !found {
		return nil, false, err
	}
	if h.BaseOffset >= maxOffset {
		return nil, true, nil
	}
	n := min(int64(max(maxBytes, 0)), s.size-pos)
	if n < int64(h.Size()) {
		if !minOne {
			return nil, true, nil
		}
		n = int64(h.Size())
	}
	buf := getReadBuffer(int(n))
	if _, err := f.ReadAt(buf, pos); err != nil {
		ReleaseRecords(buf)
		return nil, true, fmt.Errorf("storage: read: %w", err)
	}
	return buf[:wholeBatches(buf, maxOffset)], true, nil
}

// wholeBatches returns the length of the prefix of buf made of whole
// batches with BaseOffset < maxOffset (at least the first batch).
func wholeBatches(buf []byte, maxOffset int64) int {
	n := 0
	for len(buf)-n >= 12 {
		base := int64(binary.BigEndian.Uint64(buf[n:]))
		size := 12 + int(int32(binary.BigEndian.Uint32(buf[n+8:])))
		if size > len(buf)-n || (n > 0 && base >= maxOffset) || size < record.HeaderSize {
			break
		}
		n += size
	}
	return n
}

// seekBatch hops over batch headers from pos (a batch start) to limit and
// returns the first batch matching stop.
func seekBatch(f *os.File, pos, limit int64, stop func(record.Header) bool) (int64, record.Header, bool, error) {
	var hb [record.HeaderSize]byte
	for limit-pos >= record.HeaderSize {
		if _, err := f.ReadAt(hb[:], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, record.Header{}, false, fmt.Errorf("storage: read: %w", err)
		}
		h, err := record.ReadHeader(hb[:])
		if err != nil {
			return 0, record.Header{}, false, err
		}
		if stop(h) {
			return pos, h, true, nil
		}
		pos += int64(h.Size())
	}
	return pos, record.Header{}, false, nil
}

// readBatch reads the whole batch at pos.
func readBatch(f *os.File, pos int64, h record.Header) ([]byte, error) {
	b := make([]byte, h.Size())
	if _, err := f.ReadAt(b, pos); err != nil {
		return nil, fmt.Errorf("storage: read: %w", err)
	}
	return b, nil
}

// OffsetForTimestamp finds the first record with timestamp >= ts: segment by
// largest timestamp, position by the time and offset indexes, batch by
// header scan, record by decoding that batch.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error) {
	if err := l.rlockLoaded(); err != nil {
		return -1, -1, false, err
	}
	defer l.mu.RUnlock()
	for _, s := range l.segments() {
		segMax, _, err := s.timestamps()
		if err != nil {
			return -1, -1, false, err
		}
		if segMax < ts {
			continue
		}
		off, t, ok, err := l.searchSegment(s, ts)
		if err != nil || ok {
			return off, t, ok, err
		}
	}
	return -1, -1, false, nil
}

func (l *Log) searchSegment(s *segment, ts int64) (int64, int64, bool, error) {
	if err := s.acquire(); err != nil {
		return -1, -1, false, err
	}
	defer s.release()
	f, pos := s.locateTime(ts)
	for {
		p, h, ok, err := seekBatch(f, pos, s.size, func(h record.Header) bool { return h.MaxTimestamp >= ts })
		if err != nil || !ok {
			return -1, -1, false, err
		}
		off, t, ok, err := findRecord(f, p, h, func(r record.Record) bool { return r.Timestamp >= ts })
		if err != nil || ok {
			return off, t, ok, err
		}
		pos = p + int64(h.Size())
	}
}

// findRecord decodes the batch at pos and returns the first record matching.
func findRecord(f *os.File, pos int64, h record.Header, match func(record.Record) bool) (int64, int64, bool, error) {
	b, err := readBatch(f, pos, h)
	if err != nil {
		return -1, -1, false, err
	}
	off, ts, found := int64(-1), int64(-1), false
	err = record.Records(b, func(r record.Record) bool {
		if match(r) {
			off, ts, found = r.Offset, r.Timestamp, true
		}
		return !found
	})
	return off, ts, found, err
}

// MaxTimestamp returns the record with the largest timestamp (ListOffsets
// MAX_TIMESTAMP), the first one if several; -1, -1 if there is none.
func (l *Log) MaxTimestamp() (timestamp, offset int64, err error) {
	if err := l.rlockLoaded(); err != nil {
		return -1, -1, err
	}
	defer l.mu.RUnlock()
	var best *segment // stays nil if lazy
	bestTS, bestOff := int64(-1), int64(-1)
	for _, s := range l.segments() {
		ts, off, err := s.timestamps()
		if err != nil {
			return -1, -1, err
		}
		if ts > bestTS {
			best, bestTS, bestOff = s, ts, off
		}
	}
	if best == nil {
		return -1, -1, nil
	}
	if err := best.acquire(); err != nil {
		return -1, -1, err
	}
	defer best.release()
	f, pos := best.locate(bestOff)
	p, h, ok, err := seekBatch(f, pos, best.size, func(h record.Header) bool { return h.LastOffset() >= bestOff })
	if err != nil || !ok {
		return -1, -1, err
	}
	off, _, ok, err := findRecord(f, p, h, func(r record.Record) bool { return r.Timestamp == bestTS })
	if err != nil || !ok {
		return bestTS, h.LastOffset(), err
	}
	return bestTS, off, nil
}

package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/samsa-kafka/samsa/internal/record"
)

// segment is one <base>.log file with its .index and .timeindex. Files and
// in-memory indexes are opened on first use and may be closed at any time by
// the fd cache when nobody holds the segment (refs == 0).
type segment struct {
	base  int64
	path  string // directory + %020d, without extension
	cache *fdCache

	// Guarded by the owning Log's mu.
	size int64 // bytes of valid batches
	next int64 // offset after the last batch
	// The segment.ms roll clock (Kafka's rollingBasedTimestamp): the max
	// timestamp of the first batch, read back from the file after a
	// restart, or the .log mtime if that batch has none (rollMtime).
	rollTS    int64
	rollKnown bool
	rollMtime bool
	rollWall  int64 // unix ms of the first append in this process, -1 none
	// rollJitter is how much earlier than segment.ms it rolls (Kafka's
	// rollJitterMs), drawn at its first roll check; -1 before.
	rollJitter int64
	active     bool
	interval   int32 // index.interval.bytes

	mu          sync.Mutex // guards everything below
	f           *os.File
	idxF, tidxF *os.File // open for appends on the active segment only
	loaded      bool     // idx and tidx hold the index files
	idx         []offsetEntry
	tidx        []timeEntry
	refs        int
	evicted     bool
	deleted     bool
	tsKnown     bool
	maxTS       int64 // largest batch MaxTimestamp, -1 none
	maxTSOff    int64 // last offset of the batch holding maxTS
	sinceIdx    int64 // bytes appended since the last offset index entry
	wbFrom      int64 // writeback.go: where the bytes not yet handed to writeback start, -1 before a write in this process
	wbBusy      bool  // a writeback goroutine runs for the segment
}

func segmentPath(dir string, base int64) string {
	return fmt.Sprintf("%s%c%020d", dir, os.PathSeparator, base)
}

func newSegment(dir string, base int64, cache *fdCache, interval int32) *segment {
	return &segment{base: base, path: segmentPath(dir, base), cache: cache, next: base,
		rollWall: -1, rollTS: -1, rollJitter: -1, interval: interval, maxTS: -1, maxTSOff: -1, wbFrom: -1}
}

// rollJitterMs is the segment's roll jitter, drawn the first time as
// Kafka's LogConfig.randomSegmentJitter does: uniformly below
// min(segment.jitter.ms, segment.ms), 0 without a jitter. Called under
// the owning Log's mu held for writing.
func (s *segment) rollJitterMs(cfg *LogConfig) int64 {
	if s.rollJitter < 0 {
		s.rollJitter = 0
		if cfg.SegmentJitterMs > 0 {
			s.rollJitter = rand.Int64N(min(cfg.SegmentJitterMs, cfg.SegmentMs))
		}
	}
	return s.rollJitter
}

// acquire pins the segment with its files open. The caller holds the Log's
// mu (read or write) and must call release.
func (s *segment) acquire() error {
	s.mu.Lock()
	if s.deleted {
		s.mu.Unlock()
		return ErrLogClosed
	}
	if s.f == nil {
		if err := s.openLocked(); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.refs++
	s.evicted = false
	fds := s.fdsLocked()
	s.mu.Unlock()
	s.cache.touch(s, fds)
	return nil
}

func (s *segment) release() {
	s.mu.Lock()
	s.refs--
	if s.refs == 0 && s.evicted {
		s.closeLocked()
	}
	s.mu.Unlock()
}

// evict is called by the fd cache: close now, or when the last user leaves.
func (s *segment) evict() {
	s.mu.Lock()
	if s.refs > 0 {
		s.evicted = true
	} else {
		s.closeLocked()
	}
	s.mu.Unlock()
}

func (s *segment) fdsLocked() int {
	n := 0
	for _, f := range []*os.File{s.f, s.idxF, s.tidxF} {
		if f != nil {
			n++
		}
	}
	return n
}

func (s *segment) openLocked() error {
	f, err := os.OpenFile(s.path+".log", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("storage: open segment: %w", err)
	}
	s.f = f
	if !s.loaded {
		if err := s.loadIndexesLocked(); err != nil {
			s.closeLocked()
			return err
		}
	}
	if s.active {
		if err := s.openAppendersLocked(); err != nil {
			s.closeLocked()
			return err
		}
	}
	return nil
}

func (s *segment) openAppendersLocked() error {
	var err error
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if s.idxF == nil {
		if s.idxF, err = os.OpenFile(s.path+".index", flags, 0o644); err != nil {
			return fmt.Errorf("storage: open index: %w", err)
		}
	}
	if s.tidxF == nil {
		if s.tidxF, err = os.OpenFile(s.path+".timeindex", flags, 0o644); err != nil {
			return fmt.Errorf("storage: open time index: %w", err)
		}
	}
	return nil
}

func (s *segment) closeLocked() {
	for _, f := range []**os.File{&s.f, &s.idxF, &s.tidxF} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	s.idx, s.tidx, s.loaded = nil, nil, false
	s.cache.forget(s)
}

// loadIndexesLocked reads both index files; missing or failing the sanity
// checks, they are rebuilt from the log.
func (s *segment) loadIndexesLocked() error {
	ib, err1 := os.ReadFile(s.path + ".index")
	tb, err2 := os.ReadFile(s.path + ".timeindex")
	if err := errors.Join(err1, err2); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: read index: %w", err)
	}
	idx, ok1 := parseOffsetIndex(ib, s.size)
	tidx, ok2 := parseTimeIndex(tb, s.next-s.base)
	missing := (err1 != nil || err2 != nil) && s.size > 0
	if !ok1 || !ok2 || missing {
		_, _, err := s.rebuildLocked(false, s.size)
		return err
	}
	s.idx, s.tidx, s.loaded = idx, tidx, true
	if !s.tsKnown {
		s.maxTS, s.maxTSOff = -1, -1
		if n := len(tidx); n > 0 {
			s.maxTS, s.maxTSOff = tidx[n-1].ts, s.base+int64(tidx[n-1].rel)
		}
		s.tsKnown = true
	}
	return nil
}

// rebuildLocked rescans the log from the start up to limit (checking CRCs
// if crc), recomputes the indexes and running state and rewrites the index
// files. It returns the end of the valid batches and the next offset; it does
// not truncate the log.
func (s *segment) rebuildLocked(crc bool, limit int64) (end, next int64, err error) {
	s.idx, s.tidx, s.sinceIdx = nil, nil, 0
	s.maxTS, s.maxTSOff, s.tsKnown = -1, -1, true
	var ib, tb []byte
	end, next, err = s.scanLocked(0, limit, s.base, crc, func(pos int64, h record.Header) {
		ib, tb = s.trackLocked(pos, h, ib, tb)
	})
	if err != nil {
		return 0, 0, err
	}
	if err := s.rewriteIndexesLocked(ib, tb); err != nil {
		return 0, 0, err
	}
	s.loaded = true
	return end, next, nil
}

func (s *segment) rewriteIndexesLocked(ib, tb []byte) error {
	for _, f := range []**os.File{&s.idxF, &s.tidxF} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if err := os.WriteFile(s.path+".index", ib, 0o644); err != nil {
		return fmt.Errorf("storage: write index: %w", err)
	}
	if err := os.WriteFile(s.path+".timeindex", tb, 0o644); err != nil {
		return fmt.Errorf("storage: write time index: %w", err)
	}
	if s.active && s.f != nil {
		return s.openAppendersLocked()
	}
	return nil
}

// scanLocked walks the batches in [from, limit) and calls fn for each valid
// one. It stops at the first batch that is partial, fails the header sanity
// checks (magic 2, length, offsets increasing from minNext and within int32
// of base) or, with crc, fails its CRC. It returns where valid data ends and
// the offset after the last valid batch (minNext if none).
//
// An empty span (every new partition's first append replays its producers
// over one) allocates nothing; a short one, buffers only as large as it.
func (s *segment) scanLocked(from, limit, minNext int64, crc bool, fn func(int64, record.Header)) (end, next int64, err error) {
	span := limit - from
	if span < record.HeaderSize {
		return from, minNext, nil
	}
	size := int(min(span, 64<<10))
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, from, span), size)
	buf := make([]byte, record.HeaderSize, size)
	pos, next := from, minNext
	for limit-pos >= record.HeaderSize {
		buf = buf[:record.HeaderSize]
		if _, err := io.ReadFull(r, buf); err != nil {
			return pos, next, readErr(err)
		}
		h, err := record.ReadHeader(buf)
		if err != nil || h.Magic != 2 || int64(h.Size()) > limit-pos || h.LastOffsetDelta < 0 ||
			h.BaseOffset < next || h.LastOffset()-s.base > math.MaxInt32 {
			break
		}
		if crc {
			buf = append(buf, make([]byte, h.Size()-record.HeaderSize)...)
			if _, err := io.ReadFull(r, buf[record.HeaderSize:]); err != nil {
				return pos, next, readErr(err)
			}
			if !record.CheckCRC(buf) {
				break
			}
		} else if _, err := r.Discard(h.Size() - record.HeaderSize); err != nil {
			return pos, next, readErr(err)
		}
		fn(pos, h)
		pos += int64(h.Size())
		next = h.LastOffset() + 1
	}
	return pos, next, nil
}

// readErr treats a short read as the end of valid data.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return fmt.Errorf("storage: read segment: %w", err)
}

// trackLocked updates the running state for a batch at pos and adds the
// index entries due, by Kafka's LogSegment.append rule: an offset entry
// (keyed on the batch's last offset) once more than index.interval.bytes
// were appended since the last one, with a time entry if the max timestamp
// grew. The encoded entries are appended to ib and tb.
func (s *segment) trackLocked(pos int64, h record.Header, ib, tb []byte) ([]byte, []byte) {
	if h.MaxTimestamp > s.maxTS {
		s.maxTS, s.maxTSOff = h.MaxTimestamp, h.LastOffset()
	}
	if s.sinceIdx > int64(s.interval) {
		e := offsetEntry{rel: int32(h.LastOffset() - s.base), pos: int32(pos)}
		s.idx = append(s.idx, e)
		ib = appendOffsetEntry(ib, e)
		tb = s.maybeTimeEntryLocked(tb)
		s.sinceIdx = 0
	}
	s.sinceIdx += int64(h.Size())
	return ib, tb
}

func (s *segment) maybeTimeEntryLocked(tb []byte) []byte {
	if s.maxTS < 0 {
		return tb
	}
	if n := len(s.tidx); n > 0 && s.maxTS <= s.tidx[n-1].ts {
		return tb
	}
	e := timeEntry{ts: s.maxTS, rel: int32(s.maxTSOff - s.base)}
	s.tidx = append(s.tidx, e)
	return appendTimeEntry(tb, e)
}

// write stores data (whole batches described by hdrs) at pos with one
// pwrite and appends the index entries; the writeback that is then due
// starts on a goroutine of its own (writeback.go). The caller pinned the
// segment.
func (s *segment) write(data []byte, pos int64, hdrs []record.Header) error {
	s.mu.Lock()
	err := s.writeLocked(data, pos, hdrs)
	f := s.f
	var wbOff, wbLen int64
	if err == nil {
		wbOff, wbLen = s.writebackDueLocked(pos, pos+int64(len(data)))
	}
	s.mu.Unlock()
	if wbLen > 0 {
		go s.writeback(f, wbOff, wbLen)
	}
	return err
}

func (s *segment) writeLocked(data []byte, pos int64, hdrs []record.Header) error {
	if _, err := s.f.WriteAt(data, pos); err != nil {
		_ = s.f.Truncate(pos)
		return fmt.Errorf("storage: append: %w", err)
	}
	var ib, tb []byte
	for _, h := range hdrs {
		ib, tb = s.trackLocked(pos, h, ib, tb)
		pos += int64(h.Size())
	}
	return s.appendIndexesLocked(ib, tb)
}

func (s *segment) appendIndexesLocked(ib, tb []byte) error {
	if len(ib) > 0 {
		if _, err := s.idxF.Write(ib); err != nil {
			return fmt.Errorf("storage: append index: %w", err)
		}
	}
	if len(tb) > 0 {
		if _, err := s.tidxF.Write(tb); err != nil {
			return fmt.Errorf("storage: append time index: %w", err)
		}
	}
	return nil
}

// indexFull reports whether either index reached segment.index.bytes.
func (s *segment) indexFull(indexBytes int32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idx) >= int(indexBytes)/offsetEntrySize || len(s.tidx) >= int(indexBytes)/timeEntrySize
}

// sync fsyncs the log and index files. The caller pinned the segment.
func (s *segment) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range []*os.File{s.f, s.idxF, s.tidxF} {
		if f != nil {
			if err := fsync(f); err != nil {
				return fmt.Errorf("storage: fsync: %w", err)
			}
		}
	}
	return nil
}

// deactivate is called on roll: final time index entry, fsync, and the index
// append handles closed. The caller pinned the segment and holds Log.mu.
func (s *segment) deactivate() error {
	s.mu.Lock()
	err := s.appendIndexesLocked(nil, s.maybeTimeEntryLocked(nil))
	s.mu.Unlock()
	if err == nil {
		err = s.sync()
	}
	s.mu.Lock()
	s.active = false
	for _, f := range []**os.File{&s.idxF, &s.tidxF} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	fds := s.fdsLocked()
	s.mu.Unlock()
	s.cache.touch(s, fds)
	return err
}

// timestamps returns the segment's largest timestamp and the offset of its
// batch, opening the segment if not yet known. Caller holds Log.mu.
func (s *segment) timestamps() (ts, off int64, err error) {
	s.mu.Lock()
	known := s.tsKnown
	ts, off = s.maxTS, s.maxTSOff
	s.mu.Unlock()
	if known {
		return ts, off, nil
	}
	if err := s.acquire(); err != nil {
		return -1, -1, err
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxTS, s.maxTSOff, nil
}

// remove closes and deletes the segment's files.
func (s *segment) remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleted = true
	s.closeLocked()
	var errs []error
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		if err := os.Remove(s.path + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage: delete segment: %w", err)
	}
	return nil
}

// closeFiles closes the segment for good (log close).
func (s *segment) closeFiles() {
	s.mu.Lock()
	s.deleted = true
	s.closeLocked()
	s.mu.Unlock()
}

// file returns the open log file and index position for rel; the caller
// pinned the segment.
func (s *segment) locate(offset int64) (*os.File, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f, lookupOffset(s.idx, offset-s.base)
}

// locateTime returns the position to start scanning for timestamp ts.
func (s *segment) locateTime(ts int64) (*os.File, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rel, ok := lookupTime(s.tidx, ts)
	if !ok {
		return s.f, 0
	}
	return s.f, lookupOffset(s.idx, int64(rel))
}

// loadRollClock reads the roll clock of a non-empty segment from its first
// batch header, falling back to the .log mtime. The caller pinned the
// segment and holds Log.mu for writing.
func (s *segment) loadRollClock() {
	s.rollKnown, s.rollTS, s.rollMtime = true, -1, false
	f, _ := s.locate(s.base)
	var hb [record.HeaderSize]byte
	if s.size >= record.HeaderSize {
		if _, err := f.ReadAt(hb[:], 0); err == nil {
			if h, err := record.ReadHeader(hb[:]); err == nil {
				s.rollTS = h.MaxTimestamp
			}
		}
	}
	if s.rollTS < 0 {
		s.rollTS, s.rollMtime = mtimeMs(s.path+".log"), true
	}
}

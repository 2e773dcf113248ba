package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// One cleaning pass over one log (Kafka's Cleaner.doClean): capture the
// segments under Log.mu (prepareClean), map the dirty section's keys and
// write the cleaned groups without the lock, reading the files through
// descriptors of its own, then swap them in under Log.mu (swapCleaned),
// after checking that no truncation, retention or deletion changed the
// segments meanwhile. Truncation and deletion pause cleaning
// (pauseCleaning) as Kafka's abortAndPauseCleaning: the pass aborts at
// the next batch and they wait for it.

var (
	errCleanAborted         = errors.New("storage: cleaning aborted")
	errDedupeBufferTooSmall = errors.New("storage: log.cleaner.dedupe.buffer.size too small for one batch")
)

// cleanJob is what a pass works on, captured under Log.mu.
type cleanJob struct {
	l     *Log
	dir   string
	cfg   LogConfig
	segs  []*segment // the non-active segments below firstUncleanable
	stats []segStat  // of segs, as captured
	cl    cleanable
	// liveLast: the last offset of each producer's newest batch; such a
	// batch is kept, empty if need be, so the producer state survives.
	liveLast map[int64]int64
	// markerEpoch: the epoch of each producer with no batch remembered;
	// its markers of that epoch are kept, empty if need be.
	markerEpoch map[int64]int16
	// txnEntries: the .txnindex entries of the pass, aborts[i].ref = i.
	txnEntries []abortedTxn
	// aborts: the aborted transactions of the log below firstUncleanable
	// (the rewrite walks it from the start); mapAborts: those reaching
	// into the dirty section (the map walks it from firstDirty).
	aborts, mapAborts []txnAbort
}

// cleaner is one cleaner thread's state (Kafka's Cleaner): its offset map,
// I/O buffer size and throttle. Not safe for concurrent use.
type cleaner struct {
	m        *offsetMap
	ioBuf    int
	throttle func(bytes int) // may sleep; nil: unthrottled
	stop     <-chan struct{} // closed: the thread is stopping, abort (nil: never)
	recs     []record.Record
	out      []byte
	stats    cleanStats
	// txns follows the transactions through the batches a pass reads;
	// keptAborts are the refs of the aborted transactions the group being
	// written keeps in its .txnindex.
	txns       *cleanTxns
	keptAborts []int
}

// cleanStats counts what passes read and wrote.
type cleanStats struct {
	bytesRead, bytesWritten, recordsRead, recordsKept int64
	minHorizon                                        int64 // earliest delete horizon kept, 0 none
}

func newCleaner(dedupeBytes int64, ioBuf int, loadFactor float64, throttle func(int)) *cleaner {
	return &cleaner{m: newOffsetMap(dedupeBytes, loadFactor), ioBuf: max(ioBuf, 64<<10), throttle: throttle}
}

// stopped reports whether the cleaner's thread is stopping.
func (c *cleaner) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// pauseCleaning aborts a pass in progress on the log, waits for it, and
// keeps passes away until the returned resume is called.
func (l *Log) pauseCleaning() (resume func()) {
	l.cleanPauses.Add(1)
	l.cleanMu.Lock()
	return func() {
		l.cleanMu.Unlock()
		l.cleanPauses.Add(-1)
	}
}

func (l *Log) cleaningPaused() bool { return l.cleanPauses.Load() > 0 }

// clean runs one pass over l at nowMs if it is due. It reports whether it
// swapped cleaned segments in.
func (c *cleaner) clean(l *Log, nowMs int64) (bool, error) {
	if l.cleaningPaused() || !l.cleanMu.TryLock() {
		return false, nil
	}
	defer l.cleanMu.Unlock()
	job, err := l.prepareClean(nowMs)
	if err != nil || job == nil {
		return false, err
	}
	c.stats.minHorizon = 0
	mapEnd, err := c.buildMap(job)
	if err != nil {
		return false, err
	}
	groups, err := c.writeGroups(job, mapEnd, nowMs)
	if err != nil {
		removeCleaned(job.dir, groups)
		return false, err
	}
	if err := l.swapCleaned(job, groups, mapEnd, c.stats.minHorizon); err != nil {
		return false, err
	}
	return true, nil
}

// prepareClean captures the log's segments and dirty section; nil if the
// log is not compacted or not due.
func (l *Log) prepareClean(nowMs int64) (*cleanJob, error) {
	if err := l.lockLoaded(); err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	cfg := *l.config()
	if l.lazy.Load() || !cfg.Compact {
		return nil, nil
	}
	stats, err := l.segStatsLocked(cfg)
	if err != nil {
		return nil, err
	}
	cl := cleanableOffsets(stats, l.active().base, max(l.firstDirty, l.startLocked()), l.lsoLocked(), l.tombstoneHorizon, cfg, nowMs)
	if !cl.due(cfg) {
		return nil, nil
	}
	n := 0
	for n < len(stats) && stats[n].base < cl.firstUncleanable {
		n++
	}
	job := &cleanJob{l: l, dir: l.dir(), cfg: cfg, segs: append([]*segment(nil), l.segs[:n]...),
		stats: stats[:n], cl: cl, liveLast: map[int64]int64{}, markerEpoch: map[int64]int16{}}
	if l.producers != nil {
		for id, e := range l.producers.producers {
			if b, ok := e.last(); ok {
				job.liveLast[id] = b.lastOffset
			} else {
				job.markerEpoch[id] = e.epoch
			}
		}
	}
	job.txnEntries, job.aborts, job.mapAborts = cleanAborts(l.aborted, cl.firstDirty, cl.firstUncleanable)
	return job, nil
}

// segStatsLocked describes the non-active segments.
func (l *Log) segStatsLocked(cfg LogConfig) ([]segStat, error) {
	out := make([]segStat, 0, len(l.segs)-1)
	for i, s := range l.segs[:len(l.segs)-1] {
		ts, _, err := s.timestamps()
		if err != nil {
			return nil, err
		}
		st := segStat{base: s.base, end: l.segmentEnd(i), size: s.size, largestTS: ts, firstBatchTS: -1,
			indexBytes: s.size / int64(max(cfg.IndexIntervalBytes, 1)) * offsetEntrySize}
		if cfg.MaxCompactionLagMs < 1<<62 && i < len(l.segs)-1 && s.end() > l.firstDirty {
			if !s.rollKnown {
				if err := s.acquire(); err != nil {
					return nil, err
				}
				s.loadRollClock()
				s.release()
			}
			if !s.rollMtime {
				st.firstBatchTS = s.rollTS
			}
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *segment) end() int64 { return s.next }

// buildMap maps the keys of the dirty section, from firstDirty on, as far
// as the map holds whole batches. It returns where the mapped part ends:
// the new firstDirty once the pass is done.
func (c *cleaner) buildMap(job *cleanJob) (int64, error) {
	c.m.reset()
	txns := newCleanTxns(job.mapAborts)
	first, end := job.cl.firstDirty, job.cl.firstUncleanable
	for i, s := range job.segs {
		if job.stats[i].end <= first {
			continue
		}
		stop := int64(-1)
		err := c.forEachBatch(job, s, job.stats[i].size, func(h record.Header, b []byte) (bool, error) {
			full, err := c.mapBatch(txns, h, b, first)
			if full {
				stop = h.BaseOffset
			}
			return !full && err == nil, err
		})
		if err != nil {
			return 0, err
		}
		if stop >= 0 {
			if stop <= first {
				return 0, errDedupeBufferTooSmall
			}
			return stop, nil
		}
	}
	return end, nil
}

// mapBatch puts the keys of batch b at or above first in the map (Kafka's
// buildOffsetMapForSegment): none of a control batch or of aborted data
// (txns follows the transactions from first on). full: the batch does not
// fit, nothing of it was put.
func (c *cleaner) mapBatch(txns *cleanTxns, h record.Header, b []byte, first int64) (full bool, err error) {
	if h.Control() {
		c.recs = c.recs[:0]
		err := record.Records(b, func(r record.Record) bool { c.recs = append(c.recs, r); return true })
		txns.onMarker(h.ProducerID, h.LastOffset(), markerKindOf(c.recs))
		return false, err
	}
	if txns.onData(h.ProducerID, h.LastOffset(), h.Transactional()) || h.LastOffset() < first {
		return false, nil
	}
	if c.m.full(int(h.NumRecords)) {
		return true, nil
	}
	return false, record.Records(b, func(r record.Record) bool {
		if r.Key != nil && r.Offset >= first {
			c.m.put(r.Key, r.Offset)
		}
		return true
	})
}

// forEachBatch reads the batches of s's first size bytes through a
// descriptor of its own, calling fn until it returns false. It aborts when
// cleaning of the log is paused or the cleaner's thread stops.
func (c *cleaner) forEachBatch(job *cleanJob, s *segment, size int64, fn func(record.Header, []byte) (bool, error)) error {
	f, err := os.Open(s.path + ".log")
	if err != nil {
		return fmt.Errorf("storage: clean: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), c.ioBuf)
	buf := make([]byte, 0, 64<<10)
	for pos := int64(0); size-pos >= record.HeaderSize; {
		if job.l.cleaningPaused() || c.stopped() {
			return errCleanAborted
		}
		buf = buf[:record.HeaderSize]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("storage: clean: read %s: %w", s.path, err)
		}
		h, err := record.ReadHeader(buf)
		if err != nil || int64(h.Size()) > size-pos {
			return fmt.Errorf("storage: clean: bad batch in %s at %d: %v", s.path, pos, err)
		}
		buf = append(buf[:record.HeaderSize], make([]byte, h.Size()-record.HeaderSize)...)
		if _, err := io.ReadFull(r, buf[record.HeaderSize:]); err != nil {
			return fmt.Errorf("storage: clean: read %s: %w", s.path, err)
		}
		pos += int64(h.Size())
		c.stats.bytesRead += int64(h.Size())
		if c.throttle != nil {
			c.throttle(h.Size())
		}
		more, err := fn(h, buf)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// cleanedGroup is one cleaned output segment: it replaces the segments
// [base, end) (old, by base) with the file <base>.log.cleaned of size
// bytes.
type cleanedGroup struct {
	base, end, size int64
	old             []int64
	mtime           time.Time
	aborts          []int // refs (job.aborts) of the aborted transactions its .txnindex keeps
}

// writeGroups rewrites every segment from the log start up to the one
// holding mapEnd-1, grouped, into .cleaned files.
func (c *cleaner) writeGroups(job *cleanJob, mapEnd, nowMs int64) ([]cleanedGroup, error) {
	n := 0
	for n < len(job.stats) && job.stats[n].base < mapEnd {
		n++
	}
	var out []cleanedGroup
	c.txns = newCleanTxns(job.aborts)
	for _, g := range groupSegments(job.stats[:n], job.cfg.SegmentBytes, int64(job.cfg.SegmentIndexBytes)) {
		cg, err := c.writeGroup(job, g[0], g[1], nowMs)
		if err != nil {
			return out, err
		}
		out = append(out, cg)
	}
	return out, nil
}

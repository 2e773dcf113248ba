package storage

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// writeGroup writes the cleaned segments job.segs[from:to] to
// <base>.log.cleaned, fsynced, with the latest modification time of the
// group (retention by time judges it as the segments it replaces).
func (c *cleaner) writeGroup(job *cleanJob, from, to int, nowMs int64) (_ cleanedGroup, err error) {
	g := cleanedGroup{base: job.stats[from].base, end: job.stats[to-1].end}
	path := segmentPath(job.dir, g.base) + ".log" + cleanedSuffix
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return g, fmt.Errorf("storage: clean: %w", err)
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(path) // a pass given up leaves no .cleaned file
		}
	}()
	w := bufio.NewWriterSize(f, c.ioBuf)
	c.keptAborts = c.keptAborts[:0]
	for i := from; i < to; i++ {
		s := job.segs[i]
		g.old = append(g.old, s.base)
		if fi, err := os.Stat(s.path + ".log"); err == nil && fi.ModTime().After(g.mtime) {
			g.mtime = fi.ModTime()
		}
		err := c.forEachBatch(job, s, job.stats[i].size, func(h record.Header, b []byte) (bool, error) {
			out, err := c.filterBatch(c.out[:0], job, h, b, nowMs)
			c.out = out
			if err == nil && len(out) > 0 {
				_, err = w.Write(out)
				g.size += int64(len(out))
				c.stats.bytesWritten += int64(len(out))
			}
			return true, err
		})
		if err != nil {
			return g, err
		}
	}
	g.aborts = append([]int(nil), c.keptAborts...)
	if err := w.Flush(); err != nil {
		return g, fmt.Errorf("storage: clean: write: %w", err)
	}
	if err := fsync(f); err != nil {
		return g, fmt.Errorf("storage: clean: fsync: %w", err)
	}
	if !g.mtime.IsZero() {
		os.Chtimes(path, time.Time{}, g.mtime)
	}
	return g, nil
}

// filterBatch appends to dst what is left of batch b: for a data batch of
// an aborted transaction nothing (or Kafka's empty batch if it is its
// producer's newest); for a control batch what filterMarker keeps; for
// other data batches the whole batch when every record stays (and its
// tombstones already carry a delete horizon), a rebuilt batch with the
// records that stay, the empty batch when none stays but the batch is
// its producer's newest, or nothing.
func (c *cleaner) filterBatch(dst []byte, job *cleanJob, h record.Header, b []byte, nowMs int64) ([]byte, error) {
	producersLast := job.producersLast(h)
	if h.Control() {
		return c.filterMarker(dst, job, h, b, producersLast, nowMs)
	}
	if c.txns.onData(h.ProducerID, h.LastOffset(), h.Transactional()) {
		c.stats.recordsRead += int64(h.NumRecords)
		if batchFateOf(false, true, false, 0, false, producersLast, nowMs) == fateEmpty {
			return record.Rebuild(dst, h, nil, -1)
		}
		return dst, nil
	}
	horizon, hasHorizon := h.DeleteHorizon()
	c.recs = c.recs[:0]
	tombstones := false
	err := record.Records(b, func(r record.Record) bool {
		c.stats.recordsRead++
		mapped := int64(-1)
		if r.Key != nil {
			mapped = c.m.get(r.Key)
		}
		if keepRecord(r.Key != nil, r.Value == nil, r.Offset, mapped, horizon, hasHorizon, nowMs) {
			c.recs = append(c.recs, r)
			tombstones = tombstones || r.Value == nil
		}
		return true
	})
	if err != nil {
		return dst, fmt.Errorf("storage: clean: batch at %d: %w", h.BaseOffset, err)
	}
	c.stats.recordsKept += int64(len(c.recs))
	if tombstones {
		hz := horizon
		if !hasHorizon {
			hz = nowMs + job.cfg.DeleteRetentionMs
		}
		c.noteHorizon(hz)
	}
	switch {
	case len(c.recs) == int(h.NumRecords) && (!tombstones || hasHorizon):
		return append(dst, b...), nil
	case len(c.recs) == 0:
		if producersLast {
			return record.Rebuild(dst, h, nil, -1)
		}
		return dst, nil
	}
	switch {
	case !tombstones:
		horizon = -1
	case !hasHorizon:
		horizon = nowMs + job.cfg.DeleteRetentionMs
	}
	return record.Rebuild(dst, h, c.recs, horizon)
}

// filterMarker appends to dst what is left of control batch b
// (batchFateOf): the marker as it is while data of its transaction may
// remain or its delete horizon is ahead, stamped with a horizon the first
// time none remains, gone (or emptied, if its producer's newest) once the
// horizon passed. An ABORT marker kept for its data keeps its aborted
// transaction in the cleaned .txnindex (c.keptAborts).
func (c *cleaner) filterMarker(dst []byte, job *cleanJob, h record.Header, b []byte, producersLast bool, nowMs int64) ([]byte, error) {
	c.recs = c.recs[:0]
	if err := record.Records(b, func(r record.Record) bool { c.recs = append(c.recs, r); return true }); err != nil {
		return dst, fmt.Errorf("storage: clean: control batch at %d: %w", h.BaseOffset, err)
	}
	c.stats.recordsRead += int64(len(c.recs))
	discardable, keep := c.txns.onMarker(h.ProducerID, h.LastOffset(), markerKindOf(c.recs))
	if keep != nil {
		c.keptAborts = append(c.keptAborts, keep.ref)
	}
	horizon, hasHorizon := h.DeleteHorizon()
	switch batchFateOf(true, discardable, len(c.recs) == 0, horizon, hasHorizon, producersLast, nowMs) {
	case fateKeep:
		if hasHorizon {
			c.noteHorizon(horizon)
		}
		c.stats.recordsKept += int64(len(c.recs))
		return append(dst, b...), nil
	case fateHorizon:
		hz := nowMs + job.cfg.DeleteRetentionMs
		c.noteHorizon(hz)
		c.stats.recordsKept += int64(len(c.recs))
		return record.Rebuild(dst, h, c.recs, hz)
	case fateEmpty:
		if len(c.recs) == 0 {
			return append(dst, b...), nil
		}
		return record.Rebuild(dst, h, nil, -1)
	}
	return dst, nil
}

// noteHorizon remembers the earliest delete horizon the pass keeps: a
// pass is due when it passes (cleanableOffsets).
func (c *cleaner) noteHorizon(hz int64) {
	if c.stats.minHorizon == 0 || hz < c.stats.minHorizon {
		c.stats.minHorizon = max(hz, 1)
	}
}

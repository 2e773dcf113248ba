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

// filterBatch appends to dst what is left of batch b: the whole batch
// when every record stays (and its tombstones already carry a delete
// horizon), a rebuilt batch with the records that stay, Kafka's empty
// batch when none stays but the batch is its producer's newest, or
// nothing. Control batches stay as they are.
func (c *cleaner) filterBatch(dst []byte, job *cleanJob, h record.Header, b []byte, nowMs int64) ([]byte, error) {
	if h.Control() {
		return append(dst, b...), nil
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
		if c.stats.minHorizon == 0 || hz < c.stats.minHorizon {
			c.stats.minHorizon = max(hz, 1)
		}
	}
	switch {
	case len(c.recs) == int(h.NumRecords) && (!tombstones || hasHorizon):
		return append(dst, b...), nil
	case len(c.recs) == 0:
		if last, ok := job.liveLast[h.ProducerID]; ok && h.ProducerID >= 0 && last == h.LastOffset() {
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

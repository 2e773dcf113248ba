package storage

import "math"

// The log cleaner's decisions (Kafka's LogCleanerManager.cleanableOffsets,
// grabFilthiestCompactedLog, Cleaner.groupSegmentsBySize and
// shouldRetainRecord) as pure functions over segment descriptions, with the
// time passed in. cleaner.go and cleanlog.go do the I/O around them.

// segStat describes a non-active segment for the cleaning decisions.
type segStat struct {
	base, end, size int64 // offsets [base, end), bytes
	largestTS       int64 // largest timestamp, -1 none
	firstBatchTS    int64 // max timestamp of the first batch, -1 unknown
	indexBytes      int64 // offset index size
}

// cleanable is the part of a log one pass may clean: the dirty section
// [firstDirty, firstUncleanable) and the clean bytes below it.
type cleanable struct {
	firstDirty, firstUncleanable int64
	cleanBytes, dirtyBytes       int64
	// forced: a dirty record is older than max.compaction.lag.ms (KIP-354),
	// so the log is cleaned whatever its dirty ratio.
	forced bool
	// tombstonesDue: the clean section holds tombstones or transaction
	// markers whose delete horizon passed; a pass removes them even with
	// nothing dirty.
	tombstonesDue bool
}

// ratio is the dirty ratio: dirty bytes over all cleanable bytes.
func (c cleanable) ratio() float64 {
	if c.dirtyBytes == 0 {
		return 0
	}
	return float64(c.dirtyBytes) / float64(c.cleanBytes+c.dirtyBytes)
}

// due says whether the log should be cleaned now: something dirty, and a
// dirty ratio of at least min.cleanable.dirty.ratio or a forced clean.
func (c cleanable) due(cfg LogConfig) bool {
	return c.tombstonesDue || (c.dirtyBytes > 0 && (c.forced || c.ratio() >= cfg.MinCleanableRatio))
}

// cleanableOffsets computes the dirty section of a log with non-active
// segments segs (in order) and active segment at activeBase. checkpoint is
// the cleaner checkpoint (-1 none), clamped to [log start, activeBase];
// horizon the earliest delete horizon of the tombstones and markers the
// last pass kept (0 none). The
// section ends at the active segment, at the first segment reaching above
// stable, the last stable offset (the high watermark, or the first offset
// of the oldest open transaction if lower: Kafka never cleans beyond it),
// and at the first segment holding a record newer than
// min.compaction.lag.ms; cleaning is forced once the first dirty
// segment's first batch is older than max.compaction.lag.ms.
func cleanableOffsets(segs []segStat, activeBase, checkpoint, stable, horizon int64, cfg LogConfig, nowMs int64) cleanable {
	start := activeBase
	if len(segs) > 0 {
		start = segs[0].base
	}
	c := cleanable{firstDirty: min(max(checkpoint, start), activeBase), firstUncleanable: activeBase,
		tombstonesDue: horizon > 0 && nowMs >= horizon}
	firstDirtySeg := -1
	for i, s := range segs {
		if s.end <= c.firstDirty {
			c.cleanBytes += s.size
			continue
		}
		if s.end > stable || (cfg.MinCompactionLagMs > 0 && s.largestTS > nowMs-cfg.MinCompactionLagMs) {
			c.firstUncleanable = max(s.base, c.firstDirty)
			break
		}
		if firstDirtySeg < 0 {
			firstDirtySeg = i
		}
		c.dirtyBytes += s.size
	}
	if firstDirtySeg >= 0 && cfg.MaxCompactionLagMs < math.MaxInt64 {
		ts := segs[firstDirtySeg].firstBatchTS
		c.forced = ts >= 0 && nowMs-ts > cfg.MaxCompactionLagMs
	}
	return c
}

// filthiest returns the index of the log to clean among candidates, the
// one with the highest dirty ratio among those due, or -1.
func filthiest(cands []cleanable, cfgs []LogConfig) int {
	best, bestRatio := -1, -1.0
	for i, c := range cands {
		if c.due(cfgs[i]) && c.ratio() > bestRatio {
			best, bestRatio = i, c.ratio()
		}
	}
	return best
}

// groupSegments is Kafka's groupSegmentsBySize: consecutive segments are
// merged into one cleaned segment while their sizes add up to at most
// maxBytes (segment.bytes), their offset indexes to at most maxIndexBytes
// (segment.index.bytes), and their offsets fit the int32 relative offsets
// of one segment. It returns the groups as [from, to) index ranges.
func groupSegments(segs []segStat, maxBytes, maxIndexBytes int64) [][2]int {
	var groups [][2]int
	for i := 0; i < len(segs); {
		j, size, idx := i+1, segs[i].size, segs[i].indexBytes
		for j < len(segs) && size+segs[j].size <= maxBytes && idx+segs[j].indexBytes <= maxIndexBytes &&
			segs[j].end-1-segs[i].base <= math.MaxInt32 {
			size += segs[j].size
			idx += segs[j].indexBytes
			j++
		}
		groups = append(groups, [2]int{i, j})
		i = j
	}
	return groups
}

// keepRecord is Kafka's Cleaner.shouldRetainRecord: a record without a key
// goes; a record goes if the map holds a later offset for its key (mapped,
// -1 if absent); a tombstone goes once its batch's delete horizon passed.
func keepRecord(hasKey, tombstone bool, offset, mapped int64, horizon int64, hasHorizon bool, nowMs int64) bool {
	switch {
	case !hasKey:
		return false
	case mapped > offset:
		return false
	case tombstone && hasHorizon && nowMs >= horizon:
		return false
	}
	return true
}

// batchFate is what a pass does with one batch (Kafka's
// checkBatchRetention with the transaction rules).
type batchFate int8

const (
	fateFilter  batchFate = iota // a data batch: each record by keepRecord
	fateKeep                     // the batch as it is
	fateHorizon                  // the records as they are, a delete horizon stamped
	fateEmpty                    // an empty batch, for the producer state
	fateDrop                     // nothing
)

// batchFate decides for a batch from what cleanTxns said of it:
// discardable is onData's aborted for a data batch, onMarker's
// discardable for a control batch (empty: it has no record left).
// Aborted data goes; a marker stays while data of its transaction may
// remain, then gets a delete horizon (nowMs + delete.retention.ms, the
// caller's) and goes once nowMs reaches it: two passes at least, as
// Kafka's cleaner piggy-backs markers on the tombstone horizon. An empty
// marker goes at once. A batch that goes but is its producer's last (the
// producer state needs its offsets, epoch and sequence) stays empty.
func batchFateOf(control, discardable, empty bool, horizon int64, hasHorizon, producersLast bool, nowMs int64) batchFate {
	switch {
	case !control && !discardable:
		return fateFilter
	case control && !discardable:
		return fateKeep
	case control && !empty && !hasHorizon:
		return fateHorizon
	case control && !empty && nowMs < horizon:
		return fateKeep
	case producersLast:
		return fateEmpty
	}
	return fateDrop
}

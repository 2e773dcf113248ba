package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The leader-epoch cache is Kafka's LeaderEpochFileCache: for each leader
// epoch that wrote to the log, the offset of its first record, as sorted
// (epoch, startOffset) entries, epochs strictly increasing and start
// offsets non-decreasing. The leader assigns its epoch at its log end offset
// when it becomes leader or first appends; a follower assigns each new
// epoch it sees in the PartitionLeaderEpoch of the batches it copies.
// OffsetForLeaderEpoch (endOffsetFor) answers from it, and truncation keeps
// it in step with the log. epochCache is the deterministic core: no I/O;
// the Log persists it (epochlog.go).

// epochCheckpointFile is Kafka's per-partition checkpoint of the cache.
const epochCheckpointFile = "leader-epoch-checkpoint"

type epochEntry struct {
	epoch int32
	start int64
}

type epochCache struct {
	es []epochEntry
}

// latest is the newest entry.
func (c *epochCache) latest() (epochEntry, bool) {
	if len(c.es) == 0 {
		return epochEntry{}, false
	}
	return c.es[len(c.es)-1], true
}

// assign records that epoch starts at start, if epoch is newer than the
// latest one (a negative epoch or offset is ignored). Entries starting at
// or after start are dropped first, as Kafka's
// maybeTruncateNonMonotonicEntries does: an epoch that wrote nothing (its
// start is where the new one starts) gives way. It reports a change.
//
// It never writes over the entries it keeps: a copy of c taken before
// (a slice header, no allocation) undoes it. Dropping entries moves the
// cache to a new array (rare: an epoch that wrote nothing); adding one
// appends past the entries the copy holds.
func (c *epochCache) assign(epoch int32, start int64) bool {
	if epoch < 0 || start < 0 {
		return false
	}
	if l, ok := c.latest(); ok && epoch <= l.epoch {
		return false
	}
	n := len(c.es)
	for n > 0 && c.es[n-1].start >= start {
		n--
	}
	if n < len(c.es) {
		c.es = c.es[:n:n] // the append below copies: the dropped stay for an undo
	}
	c.es = append(c.es, epochEntry{epoch, start})
	return true
}

// truncateFromEnd drops the entries starting at or after end (the log was
// truncated to end), as Kafka's truncateFromEnd; a negative end is ignored.
func (c *epochCache) truncateFromEnd(end int64) bool {
	if end < 0 {
		return false
	}
	n := len(c.es)
	for n > 0 && c.es[n-1].start >= end {
		n--
	}
	changed := n < len(c.es)
	c.es = c.es[:n]
	return changed
}

// truncateFromStart forgets the epochs wholly below start (the log start
// offset moved up), as Kafka's truncateFromStart: the last entry starting
// at or below start is kept with its start moved up to start.
func (c *epochCache) truncateFromStart(start int64) bool {
	if len(c.es) == 0 || c.es[0].start >= start {
		return false
	}
	i := 0
	for i+1 < len(c.es) && c.es[i+1].start <= start {
		i++
	}
	c.es = append(c.es[:0], c.es[i:]...)
	c.es[0].start = start
	return true
}

// clear drops every entry.
func (c *epochCache) clear() bool {
	changed := len(c.es) > 0
	c.es = c.es[:0]
	return changed
}

// endOffsetFor is Kafka's LeaderEpochFileCache.endOffsetFor: the largest
// epoch <= requested and the offset where the next higher epoch starts
// (leo if requested is the latest epoch); (-1, -1) for an undefined (-1)
// or unknown newer epoch. A requested epoch older than every entry answers
// itself with the first entry's start.
func (c *epochCache) endOffsetFor(requested int32, leo int64) (int32, int64) {
	if requested < 0 {
		return -1, -1
	}
	if l, ok := c.latest(); ok && l.epoch == requested {
		return requested, leo
	}
	hi := 0 // first entry with epoch > requested
	for hi < len(c.es) && c.es[hi].epoch <= requested {
		hi++
	}
	if hi == len(c.es) {
		return -1, -1
	}
	if hi == 0 {
		return requested, c.es[0].start
	}
	return c.es[hi-1].epoch, c.es[hi].start
}

// encodeEpochs renders Kafka's leader-epoch-checkpoint: version 0, count,
// then "epoch startOffset" lines.
func encodeEpochs(es []epochEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(es))
	for _, e := range es {
		fmt.Fprintf(&b, "%d %d\n", e.epoch, e.start)
	}
	return b.Bytes()
}

// parseEpochs reads a leader-epoch-checkpoint. It fails on a bad version,
// a count that does not match the lines, or entries that are negative or
// not increasing, so that the caller rebuilds the cache from the log.
func parseEpochs(data []byte) ([]epochEntry, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("storage: %s: bad header", epochCheckpointFile)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("storage: %s: bad count %q", epochCheckpointFile, lines[1])
	}
	es := make([]epochEntry, 0, n)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("storage: %s: bad entry %q", epochCheckpointFile, l)
		}
		ep, err1 := strconv.ParseInt(f[0], 10, 32)
		off, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || ep < 0 || off < 0 {
			return nil, fmt.Errorf("storage: %s: bad entry %q", epochCheckpointFile, l)
		}
		e := epochEntry{int32(ep), off}
		if k := len(es); k > 0 && (e.epoch <= es[k-1].epoch || e.start < es[k-1].start) {
			return nil, fmt.Errorf("storage: %s: entries out of order at %q", epochCheckpointFile, l)
		}
		es = append(es, e)
	}
	return es, nil
}

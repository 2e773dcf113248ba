package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Partition names one topic partition of the campaign.
type Partition struct {
	Topic     string
	Partition int32
}

func (p Partition) String() string { return fmt.Sprintf("%s-%d", p.Topic, p.Partition) }

// Write is one record a producer sent: its value is unique in the run
// (Writer and Seq make it), Acked says whether the broker acknowledged it
// and at which offset. An unacknowledged write may or may not be in the log.
type Write struct {
	Writer     int
	Seq        int
	Idempotent bool
	Probe      bool // written by the prober (Traffic.ProbeRate)
	Partition  Partition
	Acked      bool
	Offset     int64
	At         time.Time // when the producer learned the outcome
}

// Value is the record value a write carries.
func (w Write) Value() string { return RecordValue(w.Writer, w.Seq) }

// RecordValue is the value of writer's record seq: "w<writer>-<seq>".
func RecordValue(writer, seq int) string { return fmt.Sprintf("w%d-%d", writer, seq) }

// Read is one record a consumer saw.
type Read struct {
	Partition Partition
	Offset    int64
	Value     string
}

// History is what a campaign's clients did and saw.
type History struct {
	Writes []Write
	// Live are the records consumers read while faults were applied.
	Live []Read
	// Final is every partition read from its log start to its end after
	// the cluster healed, in offset order.
	Final map[Partition][]Read
	// Commits are the offsets a group committed, per partition, in the
	// order the commits were acknowledged.
	Commits map[Partition][]int64
}

// Counts is the checker's verdict. Every field but Acked, Unacked* and
// PlainDuplicates counts violations.
type Counts struct {
	Acked, Unacked, UnackedPresent int
	// Lost: acknowledged, absent from the final log.
	Lost int
	// Moved: acknowledged at one offset, found at another.
	Moved int
	// Duplicated: an idempotent write present more than once.
	Duplicated int
	// PlainDuplicates: a plain (non-idempotent) write present more than
	// once, which retries of a plain producer may cause: reported, not a
	// violation.
	PlainDuplicates int
	// Reordered: two records of one writer in one partition in the other
	// order than it sent them.
	Reordered int
	// Unexpected: a record no writer sent.
	Unexpected int
	// Diverged: a record a consumer read during the faults that the final
	// log holds at that offset no more (a read above the true high
	// watermark, or an acknowledged write truncated away).
	Diverged int
	// CommitRegressions: a committed group offset lower than one
	// committed before it for the same partition.
	CommitRegressions int
	// Examples names up to a few records of each violation.
	Examples []string
}

// Violations is the number of violations of every kind.
func (c Counts) Violations() int {
	return c.Lost + c.Moved + c.Duplicated + c.Reordered + c.Unexpected + c.Diverged + c.CommitRegressions
}

func (c *Counts) example(format string, args ...any) {
	if len(c.Examples) < 20 {
		c.Examples = append(c.Examples, fmt.Sprintf(format, args...))
	}
}

type location struct {
	p   Partition
	off int64
}

// Check compares what was acknowledged with what the logs hold.
func Check(h History) Counts {
	var c Counts
	found := map[string][]location{}
	byOffset := map[location]string{}
	for p, reads := range h.Final {
		for _, r := range reads {
			found[r.Value] = append(found[r.Value], location{p, r.Offset})
			byOffset[location{p, r.Offset}] = r.Value
		}
	}
	written := map[string]Write{}
	for _, w := range h.Writes {
		written[w.Value()] = w
		c.checkWrite(w, found[w.Value()])
	}
	for v, locs := range found {
		if _, ok := written[v]; !ok {
			c.Unexpected += len(locs)
			c.example("unexpected %q at %s@%d", v, locs[0].p, locs[0].off)
		}
	}
	c.Reordered = reordered(h.Writes, found, &c)
	for _, r := range h.Live {
		if v, ok := byOffset[location{r.Partition, r.Offset}]; !ok || v != r.Value {
			c.Diverged++
			c.example("read %q at %s@%d during the run, final log has %q", r.Value, r.Partition, r.Offset, v)
		}
	}
	for p, offs := range h.Commits {
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] {
				c.CommitRegressions++
				c.example("group offset of %s went from %d to %d", p, offs[i-1], offs[i])
			}
		}
	}
	return c
}

func (c *Counts) checkWrite(w Write, locs []location) {
	if len(locs) > 1 {
		if w.Idempotent {
			c.Duplicated += len(locs) - 1
			c.example("idempotent %s present %d times", w.Value(), len(locs))
		} else {
			c.PlainDuplicates += len(locs) - 1
		}
	}
	if !w.Acked {
		c.Unacked++
		if len(locs) > 0 {
			c.UnackedPresent++
		}
		return
	}
	c.Acked++
	switch {
	case len(locs) == 0:
		c.Lost++
		c.example("lost %s acknowledged at %s@%d", w.Value(), w.Partition, w.Offset)
	case !slicesContain(locs, location{w.Partition, w.Offset}):
		c.Moved++
		c.example("moved %s acknowledged at %s@%d, found at %s@%d", w.Value(), w.Partition, w.Offset, locs[0].p, locs[0].off)
	}
}

func slicesContain(locs []location, l location) bool {
	for _, x := range locs {
		if x == l {
			return true
		}
	}
	return false
}

// reordered counts, per writer and partition, adjacent pairs of its
// records (by first position in the log) whose sequence numbers go down.
func reordered(writes []Write, found map[string][]location, c *Counts) int {
	type key struct {
		writer int
		p      Partition
	}
	type pos struct {
		seq int
		off int64
	}
	per := map[key][]pos{}
	for _, w := range writes {
		if locs := found[w.Value()]; len(locs) > 0 && !w.Probe { // the prober's attempts are independent
			k := key{w.Writer, locs[0].p}
			per[k] = append(per[k], pos{w.Seq, locs[0].off})
		}
	}
	n := 0
	for k, ps := range per {
		sort.Slice(ps, func(i, j int) bool { return ps[i].off < ps[j].off })
		for i := 1; i < len(ps); i++ {
			if ps[i].seq < ps[i-1].seq {
				n++
				c.example("writer %d in %s: seq %d at %d after seq %d at %d", k.writer, k.p, ps[i].seq, ps[i].off, ps[i-1].seq, ps[i-1].off)
			}
		}
	}
	return n
}

// String prints the counts as the report's checker section.
func (c Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "acknowledged %d, unacknowledged %d (%d of them in the log)\n", c.Acked, c.Unacked, c.UnackedPresent)
	fmt.Fprintf(&b, "lost %d  moved %d  duplicated %d  reordered %d  unexpected %d  diverged reads %d  commit regressions %d\n",
		c.Lost, c.Moved, c.Duplicated, c.Reordered, c.Unexpected, c.Diverged, c.CommitRegressions)
	fmt.Fprintf(&b, "duplicates of plain (non-idempotent) producers: %d (allowed)\n", c.PlainDuplicates)
	for _, e := range c.Examples {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	return b.String()
}

// LongestGap is, over the partitions, the longest time within [from, to]
// between two acknowledgements of a partition (or the window's edge and
// one): how long some partition took no acknowledged write, and from when.
func LongestGap(writes []Write, from, to time.Time) (time.Duration, Partition, time.Time) {
	acks := map[Partition][]time.Time{}
	for _, w := range writes {
		if w.Acked {
			acks[w.Partition] = append(acks[w.Partition], w.At)
		}
	}
	var worst time.Duration
	var where Partition
	var since time.Time
	for p, ts := range acks {
		sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
		prev := from
		for _, t := range append(ts, to) {
			if t.Before(from) {
				continue
			}
			if t.After(to) {
				t = to
			}
			if d := t.Sub(prev); d > worst {
				worst, where, since = d, p, prev
			}
			prev = t
			if !t.Before(to) {
				break
			}
		}
	}
	return worst, where, since
}

// FirstAcks is, over the partitions, the longest time from `from` to the
// partition's first acknowledged write at or after it, counting only
// acknowledgements before `until`; ok is false if some partition had none.
func FirstAcks(writes []Write, partitions []Partition, from, until time.Time) (d time.Duration, ok bool) {
	first := map[Partition]time.Time{}
	for _, w := range writes {
		if !w.Acked || w.At.Before(from) || !w.At.Before(until) {
			continue
		}
		if t, seen := first[w.Partition]; !seen || w.At.Before(t) {
			first[w.Partition] = w.At
		}
	}
	for _, p := range partitions {
		t, seen := first[p]
		if !seen {
			return 0, false
		}
		d = max(d, t.Sub(from))
	}
	return d, true
}

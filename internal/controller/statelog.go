package controller

// The state-change log (Kafka's state-change.log) for calls that touch many
// partitions. Kafka writes a line per partition there; at 100k partitions
// that is most of a second of formatting and writing on the controller loop
// (a broker failure's elections took 21 µs a partition logged, 3 µs not)
// and a flood on the server's stderr. So the per-partition lines are Debug
// (SAMSA_LOG_LEVEL=debug shows them), and a call writes one Info line with
// how many partitions it changed and one line per reason some were left as
// they were, naming the first few (Warn for elections, Info for refused
// AlterPartition items, which a broker's controlled shutdown makes in bulk).

import (
	"log/slog"
	"strconv"
)

// outcomeSample is how many partitions a line for skips names.
const outcomeSample = 10

// outcomes counts what one state-machine call did.
type outcomes struct {
	done      int
	skips     []skip     // by reason, in order of first occurrence
	skipLevel slog.Level // of the lines for skips
}

type skip struct {
	reason string
	n      int
	first  []TP
}

// skipped records that tp was left as it was, for reason, with a debug
// line of its own.
func (c *Controller) skipped(o *outcomes, reason string, tp TP) {
	if c.logsStateChanges(slog.LevelDebug) {
		c.stateTrace(reason, "partition", tp)
	}
	o.skip(reason, tp)
}

// skip records that tp was left as it was, for reason.
func (o *outcomes) skip(reason string, tp TP) {
	for i := range o.skips {
		if s := &o.skips[i]; s.reason == reason {
			s.n++
			if len(s.first) < outcomeSample {
				s.first = append(s.first, tp)
			}
			return
		}
	}
	o.skips = append(o.skips, skip{reason: reason, n: 1, first: []TP{tp}})
}

// logOutcomes writes o's summary lines: msg with the partitions done, then
// each reason for a skip; args (key-value pairs) go on every line.
func (c *Controller) logOutcomes(msg string, o *outcomes, args ...any) {
	if o.done > 0 {
		c.stateChange(msg, append(args[:len(args):len(args)], "partitions", o.done)...)
	}
	for _, s := range o.skips {
		names := make([]string, len(s.first))
		for i, tp := range s.first {
			names[i] = tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
		}
		c.stateChangeAt(o.skipLevel, s.reason, append(args[:len(args):len(args)], "partitions", s.n, "first", names)...)
	}
}

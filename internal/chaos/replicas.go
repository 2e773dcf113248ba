package chaos

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// CompareReplicas compares, for each partition, the record batches below
// its high watermark in the copies of the brokers in its in-sync replica
// set (the segment files' bytes, batch by batch) and returns one line per
// difference. logDirs maps a broker's name to its log dir; isr maps a
// partition to the names of its in-sync replicas when the brokers stopped
// (a partition it lacks has every copy compared). Brokers missing a
// partition are skipped.
//
// Only the ISR must agree below the high watermark. A copy elsewhere may
// hold a tail its broker wrote as leader and no one else has: a replica
// out of the ISR truncates it when it next fetches, and a copy on a broker
// that a reassignment removed while it was down or cut off is never told
// to go (Kafka's controller does not wait for StopReplica's answers): that
// broker sets it aside as stray (<topic>-<p>.<uuid>-stray, not looked at
// here, deleted after log.segment.delete.delay.ms) at its next full
// metadata snapshot, on registering again or at a controller failover, and
// until then it is a copy like the others.
// Those copies are listed in outside, not compared.
func CompareReplicas(logDirs map[string]string, hw map[Partition]int64, isr map[Partition][]string) (diffs, outside []string) {
	names := make([]string, 0, len(logDirs))
	for n := range logDirs {
		names = append(names, n)
	}
	sort.Strings(names)
	for p, end := range hw {
		var ref []byte
		var refName string
		var others []string // copies outside the ISR
		inSync, known := isr[p]
		for _, n := range names {
			dir := filepath.Join(logDirs[n], p.String())
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			if known && !slices.Contains(inSync, n) {
				others = append(others, n)
				continue
			}
			b, err := batchesBelow(dir, end)
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("%s on %s: %v", p, n, err))
				continue
			}
			if ref == nil {
				ref, refName = b, n
				continue
			}
			// One a prefix of the other is a replica that had not caught
			// up when the brokers stopped: lag, not divergence.
			if diverge(ref, b) {
				diffs = append(diffs, fmt.Sprintf("%s: %s and %s differ below the high watermark %d (%d and %d bytes, first difference at byte %d)",
					p, refName, n, end, len(ref), len(b), firstDiff(ref, b)))
			}
		}
		for _, n := range others {
			line := fmt.Sprintf("%s on %s (ISR %s)", p, n, strings.Join(inSync, ","))
			if b, err := batchesBelow(filepath.Join(logDirs[n], p.String()), end); err != nil {
				line += fmt.Sprintf(": %v", err)
			} else if ref != nil && diverge(ref, b) {
				line += fmt.Sprintf(": differs from %s's below the high watermark at byte %d (%d and %d bytes)", refName, firstDiff(ref, b), len(ref), len(b))
			}
			outside = append(outside, line)
		}
	}
	sort.Strings(diffs)
	sort.Strings(outside)
	return diffs, outside
}

// diverge reports whether neither of a and b is a prefix of the other.
func diverge(a, b []byte) bool {
	k := min(len(a), len(b))
	return !bytes.Equal(a[:k], b[:k])
}

// batchesBelow concatenates the batches of a partition dir's segments
// whose last offset is below end.
func batchesBelow(dir string, end int64) ([]byte, error) {
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	sort.Strings(segs) // zero-padded base offsets sort as numbers
	var out []byte
	for _, s := range segs {
		data, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		for len(data) >= 61 {
			base := int64(binary.BigEndian.Uint64(data[0:8]))
			size := int(binary.BigEndian.Uint32(data[8:12])) + 12
			if size < 61 || size > len(data) {
				break // a torn tail, above what was acknowledged
			}
			last := base + int64(binary.BigEndian.Uint32(data[23:27]))
			if last >= end {
				return out, nil
			}
			out = append(out, data[:size]...)
			data = data[size:]
		}
	}
	return out, nil
}

func firstDiff(a, b []byte) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

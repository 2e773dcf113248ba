package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Crash-safe replacement of segments by a cleaned one (Kafka's
// replaceSegments). The cleaned data of the segments [base, end) is
// written to <base>.log.cleaned and fsynced; then, in swapSteps order:
//
//  1. <base>.swapend records end (written atomically): which segments
//     the swap replaces, since the cleaned segment may end before end;
//  2. <base>.log.cleaned is renamed <base>.log.swap, the directory
//     fsynced: the commit point;
//  3. the old segments' files (.index, .timeindex, .log) are deleted;
//  4. <base>.log.swap is renamed <base>.log, the directory fsynced (its
//     indexes are rebuilt when it is first opened);
//  5. <base>.swapend is deleted.
//
// recoverSwaps, run before a log loads, rolls back a swap that had not
// reached step 2 (deleting .cleaned files and lone markers) and finishes
// one that had (steps 3 to 5 again), so a kill -9 at any point leaves every
// surviving record in the log exactly once.

const (
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"
	swapEndSuffix = ".swapend"
	swapSteps     = 5
)

// swapStep performs step n (1-based) of replacing the segments old (bases)
// by the cleaned segment base, which covers offsets up to end.
func swapStep(dir string, base, end int64, old []int64, n int) error {
	p := segmentPath(dir, base)
	var err error
	switch n {
	case 1:
		err = writeFileSync(p+swapEndSuffix, []byte(strconv.FormatInt(end, 10)))
	case 2:
		if err = os.Rename(p+".log"+cleanedSuffix, p+".log"+swapSuffix); err == nil {
			err = syncDir(dir)
		}
	case 3:
		for _, b := range old {
			err = errors.Join(err, removeSegmentFiles(segmentPath(dir, b)))
		}
	case 4:
		if err = os.Rename(p+".log"+swapSuffix, p+".log"); err == nil {
			err = syncDir(dir)
		}
	case 5:
		if err = os.Remove(p + swapEndSuffix); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("storage: swap cleaned segment %d, step %d: %w", base, n, err)
	}
	return nil
}

// removeSegmentFiles deletes a segment's index files, then its log.
func removeSegmentFiles(path string) error {
	var errs []error
	for _, ext := range []string{".index", ".timeindex", ".log"} {
		if err := os.Remove(path + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCleaned deletes the .cleaned files of groups not swapped in.
func removeCleaned(dir string, groups []cleanedGroup) {
	for _, g := range groups {
		os.Remove(segmentPath(dir, g.base) + ".log" + cleanedSuffix)
	}
}

// swapLeftovers says whether a directory listing holds files of a cleaning
// pass (recoverSwaps has work to do).
func swapLeftover(name string) bool {
	return strings.HasSuffix(name, cleanedSuffix) || strings.HasSuffix(name, swapSuffix) ||
		strings.HasSuffix(name, swapEndSuffix)
}

// recoverSwaps finishes or rolls back the swaps a crash interrupted in dir.
func recoverSwaps(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("storage: list segments: %w", err)
	}
	var bases []int64
	var errs []error
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, cleanedSuffix):
			errs = append(errs, os.Remove(filepath.Join(dir, name)))
		case strings.HasSuffix(name, ".log"+swapSuffix), strings.HasSuffix(name, swapEndSuffix):
			num, _, _ := strings.Cut(name, ".")
			if b, err := strconv.ParseInt(num, 10, 64); err == nil {
				bases = append(bases, b)
			}
		}
	}
	for _, b := range bases {
		errs = append(errs, recoverSwap(dir, b, ents))
	}
	errs = append(errs, syncDir(dir))
	return errors.Join(errs...)
}

// recoverSwap finishes the swap of base if it passed its commit point (a
// .log.swap exists), else drops its marker.
func recoverSwap(dir string, base int64, ents []os.DirEntry) error {
	p := segmentPath(dir, base)
	if _, err := os.Stat(p + ".log" + swapSuffix); err != nil {
		return swapStep(dir, base, 0, nil, 5) // rolled back, or done but for the marker
	}
	data, err := os.ReadFile(p + swapEndSuffix)
	end, perr := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || perr != nil {
		end = base + 1 // cannot happen (the marker precedes the commit): replace base only
	}
	var old []int64
	for _, e := range ents {
		num, ok := strings.CutSuffix(e.Name(), ".log")
		if b, err := strconv.ParseInt(num, 10, 64); ok && err == nil && b >= base && b < end {
			old = append(old, b)
		}
	}
	for n := 3; n <= swapSteps; n++ {
		if err := swapStep(dir, base, end, old, n); err != nil {
			return err
		}
	}
	return nil
}

// swapCleaned swaps the cleaned groups in under Log.mu, if the segments
// they replace are still the log's first ones, unchanged; otherwise the
// pass is dropped. firstDirty becomes mapEnd.
func (l *Log) swapCleaned(job *cleanJob, groups []cleanedGroup, mapEnd, horizon int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, g := range groups {
		n += len(g.old)
	}
	if l.closed || l.cleaningPaused() || !l.sameSegmentsLocked(job, n) {
		removeCleaned(job.dir, groups)
		return errCleanAborted
	}
	if err := l.dropCleanedTxnsLocked(job, groups); err != nil {
		removeCleaned(job.dir, groups)
		return err
	}
	segs := make([]*segment, 0, len(groups)+len(l.segs)-n)
	for _, g := range groups {
		segs = append(segs, l.swapGroupLocked(g))
	}
	for _, s := range l.segs[:n] {
		s.closeFiles()
	}
	var err error
	for _, g := range groups {
		for step := 1; step <= swapSteps && err == nil; step++ {
			err = swapStep(job.dir, g.base, g.end, g.old, step)
		}
	}
	if err != nil {
		l.dirs.log.Error("storage: swap of cleaned segments failed, reloading", "partition", l.tp, "err", err)
		return errors.Join(err, l.reloadLocked())
	}
	l.segs = append(segs, l.segs[n:]...)
	l.firstDirty = max(l.firstDirty, mapEnd)
	l.tombstoneHorizon = horizon
	l.dirs.cleanerDirty.Store(true)
	return nil
}

// sameSegmentsLocked says whether the log's first n segments are the
// job's, unchanged and not active.
func (l *Log) sameSegmentsLocked(job *cleanJob, n int) bool {
	if n > len(l.segs)-1 || n > len(job.segs) {
		return false
	}
	for i := range n {
		s := l.segs[i]
		if s != job.segs[i] || s.size != job.stats[i].size || s.active || l.segmentEnd(i) != job.stats[i].end {
			return false
		}
	}
	return true
}

// swapGroupLocked is the in-memory segment of a cleaned group: it opens
// (and rebuilds its indexes) on first use.
func (l *Log) swapGroupLocked(g cleanedGroup) *segment {
	s := newSegment(l.dir(), g.base, l.dirs.cache, l.config().IndexIntervalBytes)
	s.size, s.next = g.size, g.end
	return s
}

// reloadLocked closes the log's segments and loads it again from its files
// (recoverSwaps first): after a swap failed half-way.
func (l *Log) reloadLocked() error {
	for _, s := range l.segs {
		s.closeFiles()
	}
	l.segs = nil
	err := l.loadLocked()
	if err != nil {
		l.closed = true
	}
	return err
}

// dropCleanedTxnsLocked removes from the .txnindex the aborted
// transactions whose marker is in a cleaned group and that the group does
// not keep (Kafka writes the cleaned segment's index with the kept ones
// only): no data of theirs was left for the pass to read. It runs before
// the swap's commit point, which is safe either way: without their data
// the old segments need them no more than the cleaned ones. The files
// stay where they are (an index file is found by the offsets it holds).
func (l *Log) dropCleanedTxnsLocked(job *cleanJob, groups []cleanedGroup) error {
	if len(groups) == 0 || len(job.txnEntries) == 0 {
		return nil
	}
	kept := map[int]bool{}
	for _, g := range groups {
		for _, ref := range g.aborts {
			kept[ref] = true
		}
	}
	type key struct{ pid, first, last int64 }
	lo, hi := groups[0].base, groups[len(groups)-1].end
	drop := map[key]bool{}
	var gone []abortedTxn
	for ref, a := range job.txnEntries {
		if a.lastOffset >= lo && a.lastOffset < hi && !kept[ref] {
			drop[key{a.producerID, a.firstOffset, a.lastOffset}] = true
			gone = append(gone, a)
		}
	}
	return l.dropTxnsLocked(gone, func(a abortedTxn) bool { return drop[key{a.producerID, a.firstOffset, a.lastOffset}] })
}

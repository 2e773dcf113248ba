package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// TestCleanerSwapCrash leaves the files as a kill -9 would at each step
// of the swap (cleanswap.go), of the first and of a later cleaned group,
// then restarts: every record written is read back at most once and
// unchanged, every key's latest record is there, and a cleaning pass
// after the restart compacts the log.
func TestCleanerSwapCrash(t *testing.T) {
	for _, gi := range []int{0, 1} {
		for step := 0; step <= swapSteps; step++ {
			t.Run(fmt.Sprintf("group%d/step%d", gi, step), func(t *testing.T) {
				crashMidSwap(t, gi, step)
			})
		}
	}
}

func crashMidSwap(t *testing.T, gi, step int) {
	dir := t.TempDir()
	m := openManager(t, dir)
	now := t0
	l, _ := m.Create(tp0, topic, compactConfig())
	mdl := model{}
	randomWrites(t, l, rand.New(rand.NewPCG(uint64(gi*10+step), 3)), &now, mdl, 150, 20)
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("sentinel"), []byte("s")})
	history := map[int64]record.Record{}
	for _, r := range readAll(t, l, 0) {
		history[r.Offset] = r
	}

	c := m.newCleaner(m.CleanerConfig(), nil)
	job, err := l.prepareClean(now.UnixMilli())
	if err != nil || job == nil {
		t.Fatalf("nothing to clean: %v", err)
	}
	mapEnd, err := c.buildMap(job)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := c.writeGroups(job, mapEnd, now.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) <= gi {
		t.Fatalf("%d cleaned groups, want more than %d", len(groups), gi)
	}
	for i, g := range groups[:gi+1] {
		last := swapSteps
		if i == gi {
			last = step
		}
		for n := 1; n <= last; n++ {
			if err := swapStep(job.dir, g.base, g.end, g.old, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.crash()

	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp0)
	l.SetConfig(compactConfig())
	checkSubset(t, l, history, mdl)
	commitAll(l)
	cleanAll(t, m, now)
	checkCompacted(t, l, mdl, false)
}

// checkSubset: the log holds, in strictly increasing offsets, records as
// they were written, and the latest record of every key.
func checkSubset(t *testing.T, l *Log, history map[int64]record.Record, mdl model) {
	t.Helper()
	seen := map[int64]bool{}
	last := int64(-1)
	for _, r := range readAll(t, l, l.LogStartOffset()) {
		w, ok := history[r.Offset]
		if r.Offset <= last || !ok || !bytes.Equal(w.Key, r.Key) || !bytes.Equal(w.Value, r.Value) {
			t.Fatalf("record %d (%s=%q) after %d: not as written (%s=%q)", r.Offset, r.Key, r.Value, last, w.Key, w.Value)
		}
		last = r.Offset
		seen[r.Offset] = true
	}
	for k, r := range mdl {
		if !seen[r.Offset] {
			t.Fatalf("latest record of %s (offset %d) lost", k, r.Offset)
		}
	}
}

// TestCleanerSwapCrashTxn: the same over transactions, in a pass that
// drops .txnindex entries (aborted data removed by an earlier pass): a
// kill -9 at each step of the swap, then a restart; read_committed and
// read_uncommitted readers see only records they saw before and every
// key's latest committed record, no transaction looks open, and a pass
// after the restart cleans the log.
func TestCleanerSwapCrashTxn(t *testing.T) {
	for step := 0; step <= swapSteps; step++ {
		t.Run(fmt.Sprintf("step%d", step), func(t *testing.T) {
			dir := t.TempDir()
			m := openManager(t, dir)
			l, _ := m.Create(tp0, topic, compactConfig())
			w := newTxnWriter(t, l)
			rng := rand.New(rand.NewPCG(uint64(step), 5))
			w.random(rng, 60, true)
			w.roll()
			cleanAll(t, m, w.now)
			w.random(rng, 30, true)
			w.roll()
			rc, ru, lso := readCommitted(t, l), readUncommitted(t, l), l.LastStableOffset()
			aborted := len(l.AbortedTxns(0, l.LogEndOffset()))

			c := m.newCleaner(m.CleanerConfig(), nil)
			job, err := l.prepareClean(w.now.UnixMilli())
			if err != nil || job == nil {
				t.Fatalf("nothing to clean: %v", err)
			}
			mapEnd, err := c.buildMap(job)
			if err != nil {
				t.Fatal(err)
			}
			groups, err := c.writeGroups(job, mapEnd, w.now.UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			l.mu.Lock()
			err = l.dropCleanedTxnsLocked(job, groups)
			l.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if len(l.AbortedTxns(0, l.LogEndOffset())) >= aborted {
				t.Fatalf("no .txnindex entry dropped of %d", aborted)
			}
			g := groups[0]
			for n := 1; n <= step; n++ {
				if err := swapStep(job.dir, g.base, g.end, g.old, n); err != nil {
					t.Fatal(err)
				}
			}
			m.crash()

			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			l.SetConfig(compactConfig())
			commitAll(l)
			w.l = l
			check := func() {
				t.Helper()
				checkTxnSubset(t, "read_committed", rc, readCommitted(t, l), lso)
				checkTxnSubset(t, "read_uncommitted", ru, readUncommitted(t, l), 0)
				if got := l.LastStableOffset(); got != l.LogEndOffset() {
					t.Fatalf("LSO %d, log end %d: a transaction looks open", got, l.LogEndOffset())
				}
			}
			check()
			if cleanAll(t, m, w.now) == 0 {
				t.Fatal("nothing cleaned after the restart")
			}
			check()
			checkTxnMarkers(t, w, l.firstDirtyForTest(), false)
		})
	}
}

package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestValidateCleanerConfig: Kafka's LogCleaner.validateReconfiguration
// rules and messages, and its 1 MiB of dedupe buffer per thread.
func TestValidateCleanerConfig(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir()}, CleanerThreads: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const mib = 1 << 20
	for _, tc := range []struct {
		threads int
		dedupe  int64
		want    string // "" valid
	}{
		{4, 128 * mib, ""},
		{2, 128 * mib, ""},
		{8, 128 * mib, ""},
		{0, 128 * mib, "Log cleaner threads should be at least 1"},
		{1, 128 * mib, "Log cleaner threads cannot be reduced to less than half the current value 4"},
		{9, 128 * mib, "Log cleaner threads cannot be increased to more than double the current value 4"},
		{4, 4 * mib, "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread."},
		{4, 4*mib + 4, ""},
	} {
		err := m.ValidateCleanerConfig(CleanerConfig{Threads: tc.threads, DedupeBufferSize: tc.dedupe})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("threads=%d dedupe=%d: %v", tc.threads, tc.dedupe, err)
		case tc.want != "" && (!errors.Is(err, ErrInvalidCleanerConfig) || !strings.HasSuffix(err.Error(), ": "+tc.want)):
			t.Errorf("threads=%d dedupe=%d: %v, want %q", tc.threads, tc.dedupe, err, tc.want)
		}
	}
	// The rules hold against the running configuration.
	m.ReconfigureCleaner(CleanerConfig{Threads: 8, DedupeBufferSize: 128 * mib})
	if err := m.ValidateCleanerConfig(CleanerConfig{Threads: 16, DedupeBufferSize: 128 * mib}); err != nil {
		t.Fatalf("16 threads after 8: %v", err)
	}
}

// TestCleanerReconfigureWhileCleaning: a reconfiguration stops the cleaner
// threads in the middle of a pass (held back by a 1 byte/s throttle): the
// pass aborts before its swap and leaves no file of its own; the threads
// come back with the new settings and compact the log.
func TestCleanerReconfigureWhileCleaning(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir()}, CleanerEnable: true, CleanerThreads: 1,
		CleanerBackoff: 5 * time.Millisecond, CleanerDedupeBufferSize: 4 << 20, CleanerIOMaxBytesPerSecond: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, _ := m.Create(tp0, topic, compactConfig())
	now, mdl := time.Now(), model{}
	randomWrites(t, l, rand.New(rand.NewPCG(5, 5)), &now, mdl, 100, 10)
	now = now.Add(2 * time.Second)
	appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("s"), []byte("s")})
	before := len(readAll(t, l, 0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "a pass to start", func() bool { return m.isCleaning(l) })

	m.ReconfigureCleaner(CleanerConfig{Threads: 2, DedupeBufferSize: 4 << 20, Backoff: 5 * time.Millisecond})
	for _, pat := range []string{"*" + cleanedSuffix, "*" + swapSuffix, "*" + swapEndSuffix} {
		if left, _ := filepath.Glob(filepath.Join(l.dir(), pat)); len(left) > 0 {
			t.Fatalf("files of the stopped pass left: %v", left)
		}
	}
	if n := len(readAll(t, l, 0)); n != before {
		t.Fatalf("%d records after the stopped pass, %d before: it swapped", n, before)
	}
	if got := m.CleanerConfig(); got.Threads != 2 || got.IOMaxBytesPerSecond != math.MaxFloat64 {
		t.Fatalf("cleaner config %+v after reconfiguring", got)
	}
	waitFor(t, "the log to be compacted", func() bool { return len(readAll(t, l, 0)) <= len(mdl) })
	checkCompacted(t, l, mdl, false)
}

// TestCleanerThrottleReconfigured: passes read as fast as they can until
// log.cleaner.io.max.bytes.per.second is set; then a pass takes as long
// as its bytes at that rate (on synctest's clock).
func TestCleanerThrottleReconfigured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := openManager(t, t.TempDir())
		defer m.Close()
		l, _ := m.Create(tp0, topic, compactConfig())
		now, mdl := t0, model{}
		pass := func() (time.Duration, int64) {
			// Uncompressed: a codec's pools made in the bubble would be
			// used outside it.
			for i := range 200 {
				appendKeyed(t, l, now, mdl, 0, [2][]byte{fmt.Appendf(nil, "k%d", i%10), []byte("value")})
				now = now.Add(20 * time.Millisecond)
			}
			now = now.Add(2 * time.Second)
			appendKeyed(t, l, now, mdl, 0, [2][]byte{[]byte("s"), []byte("s")})
			start := time.Now()
			if ok, err := m.CleanOnce(now); !ok || err != nil {
				t.Fatalf("nothing cleaned: %v", err)
			}
			return time.Since(start), m.testCleaner.stats.bytesRead
		}
		if took, _ := pass(); took != 0 {
			t.Fatalf("unthrottled pass slept %v", took)
		}
		const rate = 4 << 10
		m.ReconfigureCleaner(CleanerConfig{Threads: 1, IOMaxBytesPerSecond: rate})
		took, read := pass()
		if want := time.Duration(float64(read) / rate * float64(time.Second)); read == 0 || took < want*9/10 {
			t.Fatalf("pass of %d bytes at %d B/s took %v, want about %v", read, rate, took, want)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

package storage

import (
	"os"
	"sync"
	"testing"
	"time"
)

type wbSpan struct{ off, n int64 }

// stubWriteback replaces startWriteback for the test with one that records
// each range and, if hold is not nil, waits for it to be closed first.
func stubWriteback(t *testing.T, hold chan struct{}) (got func() []wbSpan) {
	var mu sync.Mutex
	var spans []wbSpan
	old := startWriteback
	startWriteback = func(_ *os.File, off, n int64) error {
		if hold != nil {
			<-hold
		}
		mu.Lock()
		spans = append(spans, wbSpan{off, n})
		mu.Unlock()
		return nil
	}
	t.Cleanup(func() { startWriteback = old })
	return func() []wbSpan {
		mu.Lock()
		defer mu.Unlock()
		return append([]wbSpan(nil), spans...)
	}
}

// writebackLog is a new log and the size of the batches of 100-byte
// records the tests append to it.
func writebackLog(t *testing.T) (*Log, int64) {
	t.Helper()
	m := openManager(t, t.TempDir())
	t.Cleanup(func() { m.Close() })
	l, err := m.Create(tp0, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := batch(0, "x", 100)
	return l, int64(len(b))
}

// writebackIdle waits until no writeback of l's active segment runs.
func writebackIdle(t *testing.T, l *Log) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		s := l.active()
		l.mu.Unlock()
		s.mu.Lock()
		busy := s.wbBusy
		s.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("writeback still running after 10s")
		}
	}
}

// TestWritebackStartsEveryChunk: appends hand the segment's bytes to
// writeback in contiguous ranges of at least writebackChunk, from the
// start of the file; after a truncation the next range starts at the
// truncation point, so the rewritten bytes are not skipped.
func TestWritebackStartsEveryChunk(t *testing.T) {
	got := stubWriteback(t, nil)
	l, per := writebackLog(t)
	n := int(4 * writebackChunk / per)
	for i := range n {
		mustAppend(t, l, int64(i), "x", 100)
		writebackIdle(t, l) // each due range starts: none is running
	}
	size := per * int64(n)
	spans := got()
	if len(spans) < 3 {
		t.Fatalf("%d bytes appended, writeback started %d times: %v", size, len(spans), spans)
	}
	next := int64(0)
	for _, s := range spans {
		if s.off != next || s.n < writebackChunk {
			t.Fatalf("writeback ranges %v: want contiguous from 0, each >= %d", spans, writebackChunk)
		}
		next = s.off + s.n
	}
	if size-next >= writebackChunk {
		t.Fatalf("writeback stopped at byte %d of %d", next, size)
	}

	// Truncate to the first half and append again: the next range starts
	// where the truncation left the file.
	half := l.LogEndOffset() / 2
	if err := l.TruncateTo(half); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	cut := l.active().size
	l.mu.Unlock()
	before := len(got())
	for i := range int(writebackChunk/per) + 1 {
		mustAppend(t, l, int64(i), "y", 100)
		writebackIdle(t, l)
	}
	if spans := got()[before:]; len(spans) == 0 || spans[0].off != cut {
		t.Fatalf("after truncating to byte %d, writeback ranges %v: want the first from %d", cut, spans, cut)
	}
}

// TestWritebackDoesNotHoldAppends: appends go on while a segment's
// writeback has not returned (it runs beside them, not in the append
// path), start no second one meanwhile, and the next range, once it
// returned, takes everything appended since the first.
func TestWritebackDoesNotHoldAppends(t *testing.T) {
	hold := make(chan struct{})
	got := stubWriteback(t, hold)
	l, per := writebackLog(t)
	n := int(3 * writebackChunk / per)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			mustAppend(t, l, int64(i), "x", 100)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		close(hold)
		t.Fatal("appends waited for the writeback of their segment")
	}
	close(hold)
	writebackIdle(t, l)
	first := got()
	if len(first) != 1 || first[0].off != 0 {
		t.Fatalf("while one writeback ran, ranges %v: want one, from 0", first)
	}
	mustAppend(t, l, int64(n), "x", 100) // due at once: the rest since the first
	writebackIdle(t, l)
	spans := got()
	size := per * int64(n+1)
	if len(spans) != 2 || spans[1].off != first[0].off+first[0].n || spans[1].off+spans[1].n != size {
		t.Fatalf("ranges %v after %d bytes: want a second from %d to the end", spans, size, first[0].off+first[0].n)
	}
}

// TestStartWritebackClosedFile: the real startWriteback starts a file's
// writeback, and on a file closed meanwhile (a segment deleted while its
// writeback goroutine waited) fails instead of using the descriptor number.
func TestStartWritebackClosedFile(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 1<<16)); err != nil {
		t.Fatal(err)
	}
	if err := startWriteback(f, 0, 1<<16); err != nil {
		t.Fatalf("writeback of an open file: %v", err)
	}
	f.Close()
	if err := startWriteback(f, 0, 1<<16); err == nil {
		t.Fatal("writeback of a closed file succeeded")
	}
}

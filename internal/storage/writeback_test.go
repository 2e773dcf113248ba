package storage

import (
	"os"
	"testing"
)

// TestWritebackStartsEveryChunk: appends hand the segment's bytes to
// writeback in contiguous ranges of at least writebackChunk, from the
// start of the file; after a truncation the next range starts at the
// truncation point, so the rewritten bytes are not skipped.
func TestWritebackStartsEveryChunk(t *testing.T) {
	type span struct{ off, n int64 }
	var got []span
	old := startWriteback
	startWriteback = func(_ *os.File, off, n int64) error {
		got = append(got, span{off, n})
		return nil
	}
	t.Cleanup(func() { startWriteback = old })

	m := openManager(t, t.TempDir())
	defer m.Close()
	l, err := m.Create(tp0, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := batch(0, "x", 100)
	per := int64(len(b))
	n := int(4 * writebackChunk / per)
	for i := range n {
		mustAppend(t, l, int64(i), "x", 100)
	}
	size := per * int64(n)
	if len(got) < 3 {
		t.Fatalf("%d bytes appended, writeback started %d times: %v", size, len(got), got)
	}
	next := int64(0)
	for _, s := range got {
		if s.off != next || s.n < writebackChunk {
			t.Fatalf("writeback ranges %v: want contiguous from 0, each >= %d", got, writebackChunk)
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
	got = nil
	for i := range int(writebackChunk/per) + 1 {
		mustAppend(t, l, int64(i), "y", 100)
	}
	if len(got) == 0 || got[0].off != cut {
		t.Fatalf("after truncating to byte %d, writeback ranges %v: want the first from %d", cut, got, cut)
	}
}

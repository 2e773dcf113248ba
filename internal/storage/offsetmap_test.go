package storage

import (
	"fmt"
	"testing"
)

// TestOffsetMap: the latest offset per key, -1 for keys never put, and
// full once the load factor of the buffer's slots is reached.
func TestOffsetMap(t *testing.T) {
	m := newOffsetMap(1000, 0.9) // 41 slots, 36 keys
	if m.max != 36 {
		t.Fatalf("max %d keys in 1000 bytes, want 36", m.max)
	}
	for i := range 100 {
		m.put(fmt.Appendf(nil, "k%d", i%30), int64(i))
	}
	for i := range 30 {
		want := int64(i + 30*((99-i)/30))
		if got := m.get(fmt.Appendf(nil, "k%d", i)); got != want {
			t.Fatalf("k%d: %d, want %d", i, got, want)
		}
	}
	if m.get([]byte("absent")) != -1 || m.size != 30 || m.full(6) || !m.full(7) || m.lastOffset != 99 {
		t.Fatalf("size %d full(6) %v full(7) %v last %d", m.size, m.full(6), m.full(7), m.lastOffset)
	}
	m.reset()
	if m.get([]byte("k1")) != -1 || m.size != 0 {
		t.Fatal("reset kept keys")
	}
}

// TestCleanerHoldsNoBufferUntilItCleans: a cleaner thread's offset map
// allocates its buffer (log.cleaner.dedupe.buffer.size) at its first key,
// not when the thread starts: an idle broker, or one with no compacted
// log, holds none.
func TestCleanerHoldsNoBufferUntilItCleans(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	c := m.newCleaner(m.CleanerConfig(), nil)
	if c.m.slots != nil {
		t.Fatalf("a new cleaner holds a %d-byte offset map", 8*len(c.m.slots))
	}
	if c.m.get([]byte("k")) != -1 {
		t.Fatal("empty map found a key")
	}
	c.m.reset()
	c.m.put([]byte("k"), 7)
	if c.m.get([]byte("k")) != 7 || uint64(len(c.m.slots)) != 3*c.m.n {
		t.Fatalf("after put: get %d, %d words for %d slots", c.m.get([]byte("k")), len(c.m.slots), c.m.n)
	}
}

package storage

import (
	"bytes"
	"fmt"
	"testing"
)

// Read returns records in pooled buffers: a released buffer is handed out
// again, and a read into a reused buffer holds exactly the batches read,
// whatever the buffer held before.
func TestReleasedReadBuffersAreReused(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	l, err := m.Create(tp0, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		mustAppend(t, l, 1000+int64(i), fmt.Sprint("b", i), 3)
	}
	all, err := l.Read(0, 1<<62, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(all.Records)
	first, err := l.Read(0, 1<<62, int32(len(want)/4), true) // one batch
	if err != nil {
		t.Fatal(err)
	}
	oneBatch := bytes.Clone(first.Records)
	ReleaseRecords(all.Records)
	ReleaseRecords(first.Records)

	// A buffer released is handed out again by a later read: the pool may
	// drop any one buffer (a GC, or at random under -race, which drops a
	// quarter of what is put), so any earlier buffer counts, not only the
	// first one released.
	released := map[*byte]bool{&all.Records[:1][0]: true, &first.Records[:1][0]: true}
	reused := false
	for range 100 {
		res, err := l.Read(3, 1<<62, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Records, want[len(oneBatch):]) {
			t.Fatalf("read from 3 into a reused buffer: %d bytes, want the last three batches (%d bytes)", len(res.Records), len(want)-len(oneBatch))
		}
		p := &res.Records[:1][0]
		reused = reused || released[p]
		released[p] = true
		ReleaseRecords(res.Records)
	}
	if !reused {
		t.Fatal("released read buffer never handed out again")
	}
	ReleaseRecords([]byte("not from Read")) // ignored: no class size
}

package storage

import (
	"bytes"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/samsa-kafka/samsa/internal/record"
)

// sectionBytes reads a section whole.
func sectionBytes(t testing.TB, s *Section) []byte {
	t.Helper()
	if s == nil {
		return nil
	}
	b := make([]byte, s.Len())
	if _, err := syscall.Pread(s.Fd(), b, s.Offset()); err != nil {
		t.Fatal(err)
	}
	return b
}

// readSection is ReadSection returning the section's bytes, closed.
func readSection(t testing.TB, l *Log, off, maxOff int64, maxBytes int32, minOne bool) (ReadResult, []byte, error) {
	t.Helper()
	res, err := l.ReadSection(off, maxOff, maxBytes, minOne)
	if res.Records != nil {
		t.Fatal("ReadSection returned bytes with descriptors to spare")
	}
	b := sectionBytes(t, res.Section)
	if res.Section != nil {
		// The section's own descriptor is not inherited by a child process.
		if fl, err := unix.FcntlInt(uintptr(res.Section.Fd()), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Fatalf("section descriptor flags %#x (%v): not close-on-exec", fl, err)
		}
		if res.Section.End != endOf(t, b) {
			t.Fatalf("section end %d, batches end at %d", res.Section.End, endOf(t, b))
		}
		if err := res.Section.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return res, b, err
}

func endOf(t testing.TB, b []byte) int64 {
	hs, err := record.Validate(b, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return hs[len(hs)-1].LastOffset() + 1
}

// TestReadSectionAgreesWithRead: over every start offset, several high
// watermarks and byte limits, with and without KIP-74, a section holds
// exactly the bytes Read returns, in a log of several segments whose
// offset index has an entry every few batches (the section skips by it).
func TestReadSectionAgreesWithRead(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	b, _ := batch(0, "x", 3)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(7 * len(b))
	cfg.IndexIntervalBytes = int32(2 * len(b))
	l, _ := m.Create(tp0, topic, cfg)
	for i := range 30 {
		mustAppend(t, l, int64(i), fmt.Sprint(i%10), 1+i%4) // batches of 1 to 4 records
	}
	leo := l.LogEndOffset()
	l.mu.RLock()
	if len(l.segs) < 4 {
		t.Fatalf("%d segments", len(l.segs))
	}
	l.mu.RUnlock()
	sizes := []int32{0, 1, int32(len(b)) - 1, int32(len(b)), int32(3*len(b)) + 5, int32(7 * len(b)), 1 << 20}
	for off := int64(0); off <= leo; off++ {
		for _, maxOff := range []int64{off, off + 1, off + 5, leo - 3, leo, 1 << 62} {
			for _, mb := range sizes {
				for _, minOne := range []bool{false, true} {
					name := fmt.Sprintf("off %d maxOff %d maxBytes %d minOne %v", off, maxOff, mb, minOne)
					want, werr := l.Read(off, maxOff, mb, minOne)
					got, gb, gerr := readSection(t, l, off, maxOff, mb, minOne)
					if fmt.Sprint(werr) != fmt.Sprint(gerr) || !bytes.Equal(want.Records, gb) ||
						want.LogEndOffset != got.LogEndOffset || want.LogStartOffset != got.LogStartOffset {
						t.Fatalf("%s: read %d bytes (%v), section %d bytes (%v)", name, len(want.Records), werr, len(gb), gerr)
					}
					if len(gb) == 0 && got.Section != nil {
						t.Fatalf("%s: empty section", name)
					}
				}
			}
		}
	}
}

// TestSectionSurvivesRetention: a section cut before retention deletes its
// segment still reads its batches, and retention does not wait for it.
func TestSectionSurvivesRetention(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	b, _ := batch(0, "x", 5)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(2 * len(b))
	cfg.RetentionBytes = int64(2 * len(b))
	l, _ := m.Create(tp0, topic, cfg)
	for i := range 10 {
		mustAppend(t, l, 1000+int64(i), fmt.Sprint(i), 5)
	}
	commitAll(l)
	want, err := l.Read(0, 1<<62, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.ReadSection(0, 1<<62, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Section.Close()
	m.RunOnce(t0)
	if start := l.LogStartOffset(); start == 0 {
		t.Fatal("retention deleted nothing")
	}
	if got := sectionBytes(t, res.Section); !bytes.Equal(got, want.Records) {
		t.Fatal("the section of a deleted segment reads other bytes")
	}
	if !res.Section.Intact() {
		t.Fatal("retention made a section not intact")
	}
}

// TestTruncationBreaksSections: TruncateTo and TruncateFullyAndStartAt
// make every section cut before them not intact, those cut after intact.
func TestTruncationBreaksSections(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprint("full ", full), func(t *testing.T) {
			m := openManager(t, t.TempDir())
			defer m.Close()
			l, _ := m.Create(tp0, topic, DefaultLogConfig())
			for i := range 5 {
				mustAppend(t, l, int64(i), fmt.Sprint(i), 2)
			}
			before, err := l.ReadSection(0, 1<<62, 1<<20, true)
			if err != nil {
				t.Fatal(err)
			}
			defer before.Section.Close()
			if !before.Section.Intact() {
				t.Fatal("a fresh section is not intact")
			}
			if full {
				err = l.TruncateFullyAndStartAt(4)
			} else {
				err = l.TruncateTo(4)
			}
			if err != nil {
				t.Fatal(err)
			}
			if before.Section.Intact() {
				t.Fatal("a section cut before a truncation is still intact")
			}
			mustAppend(t, l, 9, "after", 2)
			after, err := l.ReadSection(4, 1<<62, 1<<20, true)
			if err != nil {
				t.Fatal(err)
			}
			defer after.Section.Close()
			if !after.Section.Intact() {
				t.Fatal("a section cut after the truncation is not intact")
			}
		})
	}
}

// TestSectionsDuringAppends: sections cut while a writer appends and rolls
// hold whole batches from the offset asked, in a log whose fd cache keeps
// closing segment descriptors.
func TestSectionsDuringAppends(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir()}, MaxOpenFiles: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, _ := batch(0, "x", 4)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(3 * len(b))
	l, _ := m.Create(tp0, topic, cfg)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(stop)
		for range 300 {
			mustAppendTagged(t, l)
		}
	})
	for r := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				off := max(l.LogEndOffset()-int64(i*7+r*13)%40, 0)
				res, err := l.ReadSection(off, 1<<62, int32(len(b)*(1+i%5)), i%2 == 0)
				if err != nil {
					t.Errorf("section at %d: %v", off, err)
					return
				}
				if res.Section == nil {
					continue
				}
				got := sectionBytes(t, res.Section)
				res.Section.Close()
				if err := checkTagged(got, off); err != nil {
					t.Errorf("section at %d: %v", off, err)
					return
				}
			}
		})
	}
	wg.Wait()

}

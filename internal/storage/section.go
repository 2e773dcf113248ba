package storage

// Sections: a read that returns where its batches sit in a segment file
// instead of the bytes, so that the server can send them with sendfile and
// the records never pass through user space (issue 22).
//
// A section does not pin its segment: it holds a descriptor of its own, a
// dup of the segment's taken under the log's read lock, so the fd cache may
// close the segment's descriptor and retention, deletion, compaction (which
// swaps a new file in by rename) and truncateFully (which unlinks) go on as
// if no section existed; the section's inode stays readable until Close.
// What a dup cannot survive is a change of the bytes in place: a
// truncation of the file it reads, after which appends write other batches
// at the same positions. Every such change first bumps the log's
// generation (rewriting), under the log's write lock; a section records the
// generation it was cut at, and Intact tells whether it still holds once
// the bytes were read. A dup shares its file offset with the segment's
// descriptor: it is only ever read at explicit offsets (pread, sendfile
// with an offset), never seeked.

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/samsa-kafka/samsa/internal/record"
)

// Section is Len bytes of whole batches at Offset of a segment file, open
// on a descriptor of its own until Close.
type Section struct {
	fd  int
	pos int64
	n   int
	// End is the offset after the last batch of the section.
	End int64
	gen *atomic.Uint64 // the log's generation
	at  uint64         // the generation the section was cut at
}

// Fd is the section's descriptor: read it only at explicit offsets.
func (s *Section) Fd() int { return s.fd }

// Len is the section's size in bytes.
func (s *Section) Len() int { return s.n }

// Offset is the position of the section's first byte in its file.
func (s *Section) Offset() int64 { return s.pos }

// Intact reports whether no truncation has changed the log's files since
// the section was cut: checked after its bytes were read, it tells that
// they were the section's batches.
func (s *Section) Intact() bool { return s.gen.Load() == s.at }

// Close closes the section's descriptor. It may be called more than once.
func (s *Section) Close() error {
	if s.fd < 0 {
		return nil
	}
	fd := s.fd
	s.fd = -1
	return syscall.Close(fd)
}

// rewriting is called, under mu held for writing, before anything changes
// bytes already written in a segment file: sections cut before are no
// longer intact.
func (l *Log) rewriting() { l.gen.Add(1) }

// ReadSection is Read returning a Section of the segment file instead of
// the bytes: the same batches (one segment at a time, whole batches from
// the one holding offset, BaseOffset < maxOffset, maxBytes, KIP-74
// minOneBatch). Res.Section is nil when there is nothing to return; else
// the caller must Close it. When no descriptor is to be had (EMFILE) it
// returns the bytes in Res.Records, as Read does.
func (l *Log) ReadSection(offset, maxOffset int64, maxBytes int32, minOneBatch bool) (ReadResult, error) {
	if err := l.rlockLoaded(); err != nil {
		return ReadResult{}, err
	}
	defer l.mu.RUnlock()
	if l.lazy.Load() {
		return lazyRead(offset)
	}
	res := ReadResult{LogEndOffset: l.leo(), LogStartOffset: l.startLocked()}
	if offset < res.LogStartOffset || offset > res.LogEndOffset {
		return res, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, res.LogStartOffset, res.LogEndOffset)
	}
	for i := l.segmentFor(offset); i < len(l.segs) && offset < res.LogEndOffset; i++ {
		sec, recs, found, err := l.sectionOf(l.segs[i], offset, maxOffset, maxBytes, minOneBatch)
		if err != nil || found {
			res.Section, res.Records = sec, recs
			return res, err
		}
	}
	return res, nil
}

// sectionOf cuts the section of s that readSegment would read (or reads
// its bytes if the descriptor cannot be duplicated); found is false when s
// holds no batch ending at or after offset.
func (l *Log) sectionOf(s *segment, offset, maxOffset int64, maxBytes int32, minOne bool) (*Section, []byte, bool, error) {
	if err := s.acquire(); err != nil {
		return nil, nil, false, err
	}
	defer s.release()
	f, pos := s.locate(offset)
	pos, h, found, err := seekBatch(f, pos, s.size, func(h record.Header) bool { return h.LastOffset() >= offset })
	if err != nil || !found {
		return nil, nil, false, err
	}
	if h.BaseOffset >= maxOffset {
		return nil, nil, true, nil
	}
	n := min(int64(max(maxBytes, 0)), s.size-pos)
	if n < int64(h.Size()) {
		if !minOne {
			return nil, nil, true, nil
		}
		n = int64(h.Size())
	}
	end, next, err := s.wholeBatchesIn(f, pos, pos+n, maxOffset, h)
	if err != nil {
		return nil, nil, true, err
	}
	fd, err := dupFile(f)
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		buf := getReadBuffer(int(end - pos))
		if _, err := f.ReadAt(buf, pos); err != nil {
			ReleaseRecords(buf)
			return nil, nil, true, fmt.Errorf("storage: read: %w", err)
		}
		return nil, buf, true, nil
	}
	if err != nil {
		return nil, nil, true, err
	}
	return &Section{fd: fd, pos: pos, n: int(end - pos), End: next, gen: &l.gen, at: l.gen.Load()}, nil, true, nil
}

// wholeBatchesIn returns where the whole batches from pos (the batch h)
// that end by limit and have BaseOffset < maxOffset end (at least h), and
// the offset after the last of them. It skips ahead by the offset index (a
// batch at an entry ends by the next entry's position) and reads the
// headers after the last entry it can use. The caller pinned s and holds
// Log.mu.
func (s *segment) wholeBatchesIn(f *os.File, pos, limit, maxOffset int64, h record.Header) (end, next int64, err error) {
	end, next = pos+int64(h.Size()), h.LastOffset()+1
	if limit == s.size && s.next <= maxOffset {
		return s.size, s.next, nil // the rest of the segment
	}
	s.mu.Lock()
	idx := s.idx
	s.mu.Unlock()
	// The last indexed batch after end whose last offset is below maxOffset
	// and that ends by limit (the next entry's position is by limit).
	k := sort.Search(len(idx), func(i int) bool { return int64(idx[i].pos) > limit }) - 2
	for ; k >= 0 && int64(idx[k].pos) >= end; k-- {
		if s.base+int64(idx[k].rel) < maxOffset {
			end = int64(idx[k].pos)
			next = -1 // the batch at end fits: its header tells
			break
		}
	}
	var hb [record.HeaderSize]byte
	for limit-end >= record.HeaderSize {
		if _, err := f.ReadAt(hb[:], end); err != nil {
			return 0, 0, fmt.Errorf("storage: read: %w", err)
		}
		h, err := record.ReadHeader(hb[:])
		if err != nil {
			return 0, 0, err
		}
		if next != -1 && (h.BaseOffset >= maxOffset || int64(h.Size()) > limit-end) {
			break
		}
		end += int64(h.Size())
		next = h.LastOffset() + 1
	}
	if next == -1 || end > limit {
		return 0, 0, fmt.Errorf("storage: offset index of segment %d disagrees with its batches", s.base)
	}
	return end, next, nil
}

func dupFile(f *os.File) (int, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("storage: dup: %w", err)
	}
	fd, derr := -1, error(nil)
	// F_DUPFD_CLOEXEC: the duplicate is close-on-exec from the start, in
	// one system call (a Section is cut for every fetched partition).
	if err := sc.Control(func(raw uintptr) { fd, derr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, fmt.Errorf("storage: dup: %w", err)
	}
	if derr != nil {
		return -1, fmt.Errorf("storage: dup: %w", derr)
	}
	return fd, nil
}

// ReadHow says how ReadAs returns its batches.
type ReadHow uint8

const (
	// MinOneBatch returns a first batch larger than maxBytes whole (KIP-74).
	MinOneBatch ReadHow = 1 << iota
	// AsSection returns a Section instead of the bytes (ReadSection).
	AsSection
)

// ReadAs is Read, or ReadSection with AsSection.
func (l *Log) ReadAs(offset, maxOffset int64, maxBytes int32, how ReadHow) (ReadResult, error) {
	if how&AsSection != 0 {
		return l.ReadSection(offset, maxOffset, maxBytes, how&MinOneBatch != 0)
	}
	return l.Read(offset, maxOffset, maxBytes, how&MinOneBatch != 0)
}

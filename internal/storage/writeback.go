package storage

// Writeback as the log grows. Appends land in the page cache, and Linux
// writes dirty pages back only once they pass dirty_background_ratio (10%
// of memory: gigabytes here); on ext4 a journal commit then waits for all
// of that data, and every write() behind it waits too. samsa-bench
// -replication, pacing RF 3 acks=all at half its throughput for 5 s on
// ext4, saw Produce round trips of up to 88 ms and a record p99 of
// 34–66 ms; the same on tmpfs, 8–11 ms and 5 ms. So every writebackChunk
// bytes appended to a segment, the range appended since is handed to
// writeback at once (sync_file_range SYNC_FILE_RANGE_WRITE: it starts the
// writes and does not wait for them, nor write metadata; it is not an
// fsync and nothing counts on it for durability), which keeps the dirty
// data of a log near what the device has yet to take. RocksDB's
// bytes_per_sync does the same.
//
// On ext4 sync_file_range allocates the delayed blocks and submits the
// I/O in the caller (ext4_writepages: 2.75% of all CPU samples on the
// machine in that benchmark, brokers and client together). Called in the
// append path, it held the log's lock and delayed the wake-up of the
// fetches waiting for the append: the followers', on which every acks=all
// produce waits. So it runs on a goroutine of its own, at most one at a
// time for a segment; the bytes appended meanwhile go with its next range.

import (
	"os"

	"golang.org/x/sys/unix"
)

// writebackChunk is how much a segment grows between writeback starts.
const writebackChunk = 1 << 20

// startWriteback starts writing back f's bytes [off, off+n) without
// waiting for them. It goes through f's SyscallConn, so a concurrent Close
// of f (the segment deleted or its descriptor evicted) waits for it rather
// than letting the descriptor number be reused under it; after the Close
// it fails. Advice only: a file system without it (EINVAL, ESPIPE) or a
// failed write-back leaves the pages dirty, as before, and an fsync or a
// write reports a real I/O error.
var startWriteback = func(f *os.File, off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}); err != nil {
		return err
	}
	return serr
}

// writebackDueLocked notes that [pos, end) of the segment file was just
// written and returns the range to hand to writeback now: all written
// since the last start, once that is writebackChunk or more and no
// writeback of the segment runs (n is 0 otherwise; the caller then runs
// writeback). A write below the last start (after a truncation) starts the
// count there. s.mu is held.
func (s *segment) writebackDueLocked(pos, end int64) (off, n int64) {
	if s.wbFrom < 0 || pos < s.wbFrom {
		s.wbFrom = pos
	}
	if s.wbBusy || end-s.wbFrom < writebackChunk {
		return 0, 0
	}
	off, n = s.wbFrom, end-s.wbFrom
	s.wbFrom, s.wbBusy = end, true
	return off, n
}

// writeback hands f's [off, off+n) to writeback, then lets the segment
// start the next.
func (s *segment) writeback(f *os.File, off, n int64) {
	_ = startWriteback(f, off, n)
	s.mu.Lock()
	s.wbBusy = false
	s.mu.Unlock()
}

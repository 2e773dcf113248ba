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

import (
	"os"

	"golang.org/x/sys/unix"
)

// writebackChunk is how much a segment grows between writeback starts.
const writebackChunk = 1 << 20

// startWriteback starts writing back f's bytes [off, off+n) without
// waiting for them.
var startWriteback = func(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// writebackDueLocked notes that [pos, end) of the segment file was just
// written and returns the range to hand to writeback now:
// all written since the last start, once that is writebackChunk or more
// (n is 0 otherwise). A write below the last start (after a truncation)
// starts the count there. s.mu is held.
func (s *segment) writebackDueLocked(pos, end int64) (off, n int64) {
	if !s.wbKnown || pos < s.wbFrom {
		s.wbFrom, s.wbKnown = pos, true
	}
	if end-s.wbFrom < writebackChunk {
		return 0, 0
	}
	off, n = s.wbFrom, end-s.wbFrom
	s.wbFrom = end
	return off, n
}

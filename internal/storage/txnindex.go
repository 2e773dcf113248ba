package storage

// The aborted-transaction index: <20-digit offset>.txnindex files in the
// partition directory, Kafka's TransactionIndex format, entries of 34
// bytes (big endian) appended as abort markers are:
//
//	Version int16 (0), ProducerId int64, FirstOffset int64,
//	LastOffset int64 (the marker's), LastStableOffset int64
//
// A file is created with its first entry, named after the active segment
// when that entry was appended (as Kafka's, whose index lives beside its
// segment), and every entry is fsynced as it is written. The log keeps all
// its entries in memory, by marker offset (aborts are rare next to data),
// each with the file it is in: files are found by the offsets they hold,
// so a file left by a segment that the cleaner merged into another stays
// valid. Loading reads every file (a missing one is empty, as Kafka
// creates them lazily too); a file that is not whole entries of version 0
// is deleted and the index rebuilt from the log from its offset on; after
// an unclean shutdown the entries from the producer-state replay's start
// are rebuilt from the log (txnlog.go). Truncation drops the entries with
// a marker at or above the new end (rewriting or deleting their files),
// retention those below the new log start, a full truncation all.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ErrCorruptTxnIndex: a .txnindex file that is not whole version 0
// entries. Loading logs it, deletes it and rebuilds it from the log.
var ErrCorruptTxnIndex = errors.New("storage: corrupt transaction index")

const (
	txnIndexSuffix  = ".txnindex"
	txnIndexVersion = 0
	txnIndexEntry   = 2 + 8 + 8 + 8 + 8
)

// AbortedTxn is an aborted transaction as a read_committed Fetch lists it
// (Kafka's FetchResponse AbortedTransaction).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// abortedTxn is one entry of the index (Kafka's AbortedTxn) and the base
// offset of the file holding it.
type abortedTxn struct {
	producerID       int64
	firstOffset      int64
	lastOffset       int64 // the abort marker's offset
	lastStableOffset int64 // when the marker was appended (txn.go)
	file             int64
}

func txnIndexPath(dir string, base int64) string {
	return fmt.Sprintf("%s%c%020d%s", dir, os.PathSeparator, base, txnIndexSuffix)
}

// parseTxnIndexName returns the base offset of a .txnindex file name.
func parseTxnIndexName(name string) (int64, bool) {
	num, ok := strings.CutSuffix(name, txnIndexSuffix)
	if !ok {
		return 0, false
	}
	off, err := strconv.ParseInt(num, 10, 64)
	return off, err == nil && off >= 0
}

// appendTxnEntry encodes a in Kafka's format.
func appendTxnEntry(b []byte, a abortedTxn) []byte {
	be := binary.BigEndian
	b = be.AppendUint16(b, txnIndexVersion)
	b = be.AppendUint64(b, uint64(a.producerID))
	b = be.AppendUint64(b, uint64(a.firstOffset))
	b = be.AppendUint64(b, uint64(a.lastOffset))
	return be.AppendUint64(b, uint64(a.lastStableOffset))
}

// decodeTxnIndex parses a .txnindex file's bytes (file is its base).
func decodeTxnIndex(b []byte, file int64) ([]abortedTxn, error) {
	if len(b)%txnIndexEntry != 0 {
		return nil, fmt.Errorf("%w: %d bytes, not a multiple of %d", ErrCorruptTxnIndex, len(b), txnIndexEntry)
	}
	be := binary.BigEndian
	out := make([]abortedTxn, 0, len(b)/txnIndexEntry)
	for p := 0; p < len(b); p += txnIndexEntry {
		r := b[p : p+txnIndexEntry]
		if v := int16(be.Uint16(r)); v != txnIndexVersion {
			return nil, fmt.Errorf("%w: entry version %d", ErrCorruptTxnIndex, v)
		}
		out = append(out, abortedTxn{producerID: int64(be.Uint64(r[2:])), firstOffset: int64(be.Uint64(r[10:])),
			lastOffset: int64(be.Uint64(r[18:])), lastStableOffset: int64(be.Uint64(r[26:])), file: file})
	}
	return out, nil
}

// readTxnIndex reads the .txnindex file of base in dir.
func readTxnIndex(dir string, base int64) ([]abortedTxn, error) {
	b, err := os.ReadFile(txnIndexPath(dir, base))
	if err != nil {
		return nil, fmt.Errorf("storage: read transaction index: %w", err)
	}
	out, err := decodeTxnIndex(b, base)
	if err != nil {
		return nil, fmt.Errorf("%020d%s: %w", base, txnIndexSuffix, err)
	}
	return out, nil
}

// writeTxnIndex replaces the file of base by entries (deletes it if none).
func writeTxnIndex(dir string, base int64, entries []abortedTxn) error {
	if len(entries) == 0 {
		if err := os.Remove(txnIndexPath(dir, base)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: delete transaction index: %w", err)
		}
		return nil
	}
	var b []byte
	for _, a := range entries {
		b = appendTxnEntry(b, a)
	}
	return writeFileSync(txnIndexPath(dir, base), b)
}

// appendTxnIndexFile appends one entry to the file of base, durably.
func appendTxnIndexFile(dir string, base int64, a abortedTxn) error {
	f, err := os.OpenFile(txnIndexPath(dir, base), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("storage: transaction index: %w", err)
	}
	_, err = f.Write(appendTxnEntry(nil, a))
	if err == nil {
		err = fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("storage: transaction index: %w", err)
	}
	return nil
}

// txnIndex is a log's aborted transactions, by marker offset.
type txnIndex []abortedTxn

// collect is Kafka's collectAbortedTransactions over [from, to): the
// entries whose marker is at or after from and whose first offset is
// before to, stopping after the first entry whose last stable offset
// reaches to (no transaction open then began before to).
func (x txnIndex) collect(from, to int64) []abortedTxn {
	i, _ := slices.BinarySearchFunc(x, from, func(a abortedTxn, off int64) int {
		if a.lastOffset < off {
			return -1
		}
		return 1
	})
	var out []abortedTxn
	for _, a := range x[i:] {
		if a.firstOffset < to {
			out = append(out, a)
		}
		if a.lastStableOffset >= to {
			break
		}
	}
	return out
}

// loadTxnIndexLocked reads the files found (their bases, sorted) into the
// log's index. It returns the lowest offset from which the index must be
// rebuilt from the log (a corrupt file, deleted), or noRebuild.
func (l *Log) loadTxnIndexLocked(files []int64) (int64, error) {
	l.aborted, l.txnFiles = nil, nil
	rebuild := int64(noRebuild)
	for _, base := range files {
		entries, err := readTxnIndex(l.dir(), base)
		if err != nil {
			l.dirs.log.Warn("storage: rebuilding transaction index", "partition", l.tp, "file", base, "err", err)
			if err := writeTxnIndex(l.dir(), base, nil); err != nil {
				return 0, err
			}
			rebuild = min(rebuild, base)
			continue
		}
		l.aborted = append(l.aborted, entries...)
		l.txnFiles = append(l.txnFiles, base)
	}
	slices.SortStableFunc(l.aborted, func(a, b abortedTxn) int { return cmp.Compare(a.lastOffset, b.lastOffset) })
	return rebuild, l.dropTxnsAboveLocked(l.leo() - 1)
}

// noRebuild: no offset of the index to rebuild.
const noRebuild = math.MaxInt64

// addAbortedLocked indexes an aborted transaction whose marker was just
// appended (or replayed), in the file of the segment holding the marker.
func (l *Log) addAbortedLocked(a abortedTxn) error {
	a.file = l.segs[l.segmentFor(a.lastOffset)].base
	if err := appendTxnIndexFile(l.dir(), a.file, a); err != nil {
		return err
	}
	if i, found := slices.BinarySearch(l.txnFiles, a.file); !found {
		l.txnFiles = slices.Insert(l.txnFiles, i, a.file)
		if err := syncDir(l.dir()); err != nil {
			return err
		}
	}
	l.aborted = append(l.aborted, a)
	return nil
}

// dropTxnsAboveLocked forgets the entries whose marker is above offset,
// rewriting the files they were in (truncation, a torn tail).
func (l *Log) dropTxnsAboveLocked(offset int64) error {
	i := len(l.aborted)
	for i > 0 && l.aborted[i-1].lastOffset > offset {
		i--
	}
	return l.dropTxnsLocked(l.aborted[i:], func(a abortedTxn) bool { return a.lastOffset > offset })
}

// dropTxnsBelowLocked forgets the entries whose marker is below offset
// (retention moved the log start there).
func (l *Log) dropTxnsBelowLocked(offset int64) error {
	i := 0
	for i < len(l.aborted) && l.aborted[i].lastOffset < offset {
		i++
	}
	return l.dropTxnsLocked(l.aborted[:i], func(a abortedTxn) bool { return a.lastOffset < offset })
}

// dropTxnsLocked removes the entries gone (those drop selects) from the
// index and rewrites each file that held one.
func (l *Log) dropTxnsLocked(gone []abortedTxn, drop func(abortedTxn) bool) error {
	if len(gone) == 0 {
		return nil
	}
	touched := map[int64]bool{}
	for _, a := range gone {
		touched[a.file] = true
	}
	l.aborted = slices.DeleteFunc(l.aborted, drop)
	var errs []error
	for file := range touched {
		var keep []abortedTxn
		for _, a := range l.aborted {
			if a.file == file {
				keep = append(keep, a)
			}
		}
		errs = append(errs, writeTxnIndex(l.dir(), file, keep))
		if len(keep) == 0 {
			l.txnFiles = slices.DeleteFunc(l.txnFiles, func(b int64) bool { return b == file })
		}
	}
	return errors.Join(errs...)
}

// dropAllTxnsLocked deletes the whole index (full truncation).
func (l *Log) dropAllTxnsLocked() error {
	var errs []error
	for _, file := range l.txnFiles {
		errs = append(errs, writeTxnIndex(l.dir(), file, nil))
	}
	l.aborted, l.txnFiles = nil, nil
	return errors.Join(errs...)
}

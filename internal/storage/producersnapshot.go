package storage

// Producer state snapshots: <20-digit offset>.snapshot in the partition
// directory holds the producer state of the log up to (not including) that
// offset, in Kafka's ProducerStateManager format, version 1 (big endian):
//
//	Version int16 (1)
//	Crc     uint32  CRC-32C of every byte after it
//	Count   int32   then Count rows of 46 bytes:
//	  ProducerId int64, ProducerEpoch int16, LastSequence int32,
//	  LastOffset int64, OffsetDelta int32, Timestamp int64,
//	  CoordinatorEpoch int32, CurrentTxnFirstOffset int64
//
// Kafka writes one row per producer, its last batch. Samsa writes one row
// per remembered batch, oldest first, consecutive per producer, so that
// retries of any of a producer's last batches are still recognised after a
// restart; Kafka's reader would keep each producer's last row, which is
// what Kafka itself writes. A producer with no batch (transaction marker
// only) has one row with LastOffset -1. Files are written atomically (temp
// file, fsync, rename, directory fsync).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrCorruptSnapshot: a snapshot file that is torn, of an unknown version,
// or fails its CRC. Loading logs it and ignores the file.
var ErrCorruptSnapshot = errors.New("storage: corrupt producer snapshot")

const (
	snapshotSuffix  = ".snapshot"
	snapshotVersion = 1
	snapshotHeader  = 2 + 4 + 4 // version, crc, count
	snapshotRow     = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
	// snapshotsKept is how many snapshots a roll leaves (Kafka keeps the
	// ones of the last two segments).
	snapshotsKept = 2
)

var snapshotCRC = crc32.MakeTable(crc32.Castagnoli)

func snapshotPath(dir string, offset int64) string {
	return fmt.Sprintf("%s%c%020d%s", dir, os.PathSeparator, offset, snapshotSuffix)
}

// parseSnapshotName returns the offset of a snapshot file name.
func parseSnapshotName(name string) (int64, bool) {
	num, ok := strings.CutSuffix(name, snapshotSuffix)
	if !ok {
		return 0, false
	}
	off, err := strconv.ParseInt(num, 10, 64)
	return off, err == nil && off >= 0
}

// encodeSnapshot serializes the state (nil: no producer).
func encodeSnapshot(s *producerStates) []byte {
	rows := 0
	if s != nil {
		for _, e := range s.producers {
			rows += max(int(e.n), 1)
		}
	}
	b := make([]byte, snapshotHeader, snapshotHeader+rows*snapshotRow)
	be := binary.BigEndian
	be.PutUint16(b, snapshotVersion)
	be.PutUint32(b[6:], uint32(rows))
	if s != nil {
		for id, e := range s.producers {
			b = appendEntryRows(b, id, e)
		}
	}
	be.PutUint32(b[2:], crc32.Checksum(b[6:], snapshotCRC))
	return b
}

// appendEntryRows appends a producer's rows: one per batch, or one with
// LastOffset -1 if it has none.
func appendEntryRows(b []byte, id int64, e *producerEntry) []byte {
	row := func(m batchMeta) {
		be := binary.BigEndian
		b = be.AppendUint64(b, uint64(id))
		b = be.AppendUint16(b, uint16(e.epoch))
		b = be.AppendUint32(b, uint32(m.lastSeq))
		b = be.AppendUint64(b, uint64(m.lastOffset))
		b = be.AppendUint32(b, uint32(m.offsetDelta))
		b = be.AppendUint64(b, uint64(m.timestamp))
		b = be.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = be.AppendUint64(b, uint64(e.txnFirstOffset))
	}
	if e.n == 0 {
		row(batchMeta{lastSeq: -1, lastOffset: -1, timestamp: -1})
	}
	for i := 0; i < int(e.n); i++ {
		row(e.batches[(int(e.head)+i)%producerBatches])
	}
	return b
}

// decodeSnapshot parses a snapshot file's bytes; ErrCorruptSnapshot if
// they are not a whole, CRC-valid version 1 snapshot.
func decodeSnapshot(b []byte) (*producerStates, error) {
	be := binary.BigEndian
	if len(b) < snapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptSnapshot, len(b))
	}
	if v := int16(be.Uint16(b)); v != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptSnapshot, v)
	}
	if crc32.Checksum(b[6:], snapshotCRC) != be.Uint32(b[2:]) {
		return nil, fmt.Errorf("%w: CRC mismatch", ErrCorruptSnapshot)
	}
	rows := int64(int32(be.Uint32(b[6:])))
	if rows < 0 || rows*snapshotRow != int64(len(b)-snapshotHeader) {
		return nil, fmt.Errorf("%w: %d rows in %d bytes", ErrCorruptSnapshot, rows, len(b))
	}
	// Sized for producers with all their batches, the common case.
	s := &producerStates{producers: make(map[int64]*producerEntry, rows/producerBatches+1)}
	var e *producerEntry
	lastID := int64(-1)
	for p := snapshotHeader; p < len(b); p += snapshotRow {
		r := b[p : p+snapshotRow]
		if id := int64(be.Uint64(r)); e == nil || id != lastID { // rows come grouped by producer
			e, lastID = s.producers[id], id
			if e == nil {
				e = newProducerEntry(int16(be.Uint16(r[8:])))
				s.producers[id] = e
			}
		}
		decodeRow(e, r)
	}
	s.indexOpen()
	return s, nil
}

// decodeRow adds one row to its producer's entry e: a batch, oldest first.
func decodeRow(e *producerEntry, r []byte) {
	be := binary.BigEndian
	e.setEpoch(int16(be.Uint16(r[8:])))
	e.coordinatorEpoch = int32(be.Uint32(r[34:]))
	e.txnFirstOffset = int64(be.Uint64(r[38:]))
	m := batchMeta{lastSeq: int32(be.Uint32(r[10:])), lastOffset: int64(be.Uint64(r[14:])),
		offsetDelta: int32(be.Uint32(r[22:])), timestamp: int64(be.Uint64(r[26:]))}
	if m.lastOffset >= 0 && m.offsetDelta >= 0 {
		e.add(m)
	}
}

// writeSnapshot writes the state as of offset into dir, durably.
func writeSnapshot(dir string, offset int64, s *producerStates) error {
	if err := writeFileSync(snapshotPath(dir, offset), encodeSnapshot(s)); err != nil {
		return fmt.Errorf("storage: producer snapshot: %w", err)
	}
	return nil
}

// readSnapshot reads and decodes the snapshot at offset.
func readSnapshot(dir string, offset int64) (*producerStates, error) {
	b, err := os.ReadFile(snapshotPath(dir, offset))
	if err != nil {
		return nil, fmt.Errorf("storage: read producer snapshot: %w", err)
	}
	s, err := decodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(snapshotPath(dir, offset)), err)
	}
	return s, nil
}

// removeSnapshot deletes the snapshot at offset (gone already is fine).
func removeSnapshot(dir string, offset int64) error {
	if err := os.Remove(snapshotPath(dir, offset)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: delete producer snapshot: %w", err)
	}
	return nil
}

package storage

import (
	"cmp"
	"slices"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What a cleaning pass knows of transactions as it walks a log in offset
// order (Kafka's CleanedTransactionMetadata): the aborted transactions
// ahead (from the .txnindex), each producer's aborted transaction being
// traversed, and the producers whose committed (or not yet decided)
// transactional data was traversed since their last marker. It decides
// which data batches are aborted, which markers a pass may discard and
// which aborted transactions the cleaned .txnindex keeps. Pure: no I/O,
// no clock; batchFateOf (cleanrules.go) turns its answers into what a
// pass writes. Unlike Kafka's, it ends an aborted transaction at its
// marker's offset even if the marker is not read (an index entry that
// outlived its marker never makes later data of its producer aborted).

// txnAbort is one aborted transaction: its producer, first offset and
// marker offset (lastOffset), as the .txnindex has them, and ref, the
// caller's index of the entry (so the cleaned index is made of the
// entries as they were read).
type txnAbort struct {
	producerID, firstOffset, lastOffset int64
	ref                                 int
}

// markerKind is what a control batch holds.
type markerKind int8

const (
	markerAbort   markerKind = iota // ABORT
	markerCommit                    // COMMIT
	markerEmpty                     // no record left: a marker a pass already emptied
	markerUnknown                   // a control record type other than ABORT or COMMIT
)

// ongoingAbort is an aborted transaction whose first offset was reached
// and whose ABORT marker was not yet; sawData once a batch of it was read.
type ongoingAbort struct {
	txn     txnAbort
	sawData bool
}

// cleanTxns walks one pass's batches in offset order. Not safe for
// concurrent use.
type cleanTxns struct {
	ahead     []txnAbort // not reached yet, by first offset
	known     map[[2]int64]bool
	aborted   map[int64]*ongoingAbort
	committed map[int64]bool
}

func newCleanTxns(aborts []txnAbort) *cleanTxns {
	t := &cleanTxns{known: map[[2]int64]bool{}, aborted: map[int64]*ongoingAbort{}, committed: map[int64]bool{}}
	t.add(aborts)
	return t
}

// add makes aborted transactions known; one already known (the same
// producer and first offset) is ignored, so overlapping look-ups of the
// index may be added.
func (t *cleanTxns) add(aborts []txnAbort) {
	for _, a := range aborts {
		k := [2]int64{a.producerID, a.firstOffset}
		if !t.known[k] {
			t.known[k] = true
			t.ahead = append(t.ahead, a)
		}
	}
	slices.SortStableFunc(t.ahead, func(a, b txnAbort) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
}

// reach starts the aborted transactions whose first offset is at or below
// offset (the last offset of the batch being read).
func (t *cleanTxns) reach(offset int64) {
	n := 0
	for n < len(t.ahead) && t.ahead[n].firstOffset <= offset {
		a := t.ahead[n]
		if o := t.aborted[a.producerID]; o == nil || o.txn.lastOffset < a.firstOffset {
			t.aborted[a.producerID] = &ongoingAbort{txn: a} // a transaction whose marker is gone ended
		}
		n++
	}
	t.ahead = t.ahead[n:]
}

// onData reads a data batch (Kafka's onBatchRead) and reports whether it
// belongs to an aborted transaction, so its records go.
func (t *cleanTxns) onData(producerID, lastOffset int64, transactional bool) (aborted bool) {
	t.reach(lastOffset)
	if !transactional {
		return false
	}
	if a := t.aborted[producerID]; a != nil && lastOffset <= a.txn.lastOffset {
		a.sawData = true
		return true
	}
	delete(t.aborted, producerID) // an entry whose marker is gone: its transaction ended before
	t.committed[producerID] = true
	return false
}

// onMarker reads a control batch (Kafka's onControlBatchRead) and reports
// whether no data of its transaction was read in this pass, so the marker
// may go (once its delete horizon passes). keep is the aborted
// transaction the cleaned .txnindex must still hold: an ABORT marker whose
// transaction's data was read stays, and so does its index entry.
func (t *cleanTxns) onMarker(producerID, lastOffset int64, kind markerKind) (discardable bool, keep *txnAbort) {
	t.reach(lastOffset)
	switch kind {
	case markerAbort:
		a := t.aborted[producerID]
		delete(t.aborted, producerID)
		if a != nil && a.sawData {
			return false, &a.txn
		}
		return true, nil
	case markerCommit:
		saw := t.committed[producerID]
		delete(t.committed, producerID)
		return !saw, nil
	case markerEmpty:
		return true, nil
	}
	return false, nil
}

// markerKindOf reads a control batch's records (as record.Records gives
// them): its first record's key is a ControlRecordKey.
func markerKindOf(recs []record.Record) markerKind {
	if len(recs) == 0 {
		return markerEmpty
	}
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(recs[0].Key); err != nil {
		return markerUnknown
	}
	switch k.Type {
	case kmsg.ControlRecordKeyTypeAbort:
		return markerAbort
	case kmsg.ControlRecordKeyTypeCommit:
		return markerCommit
	}
	return markerUnknown
}

// cleanAborts picks the .txnindex entries (index) a pass needs: those of
// transactions begun below firstUncleanable (every one of them is decided:
// firstUncleanable is at most the last stable offset), as entries and as
// the pass's view (all), and those whose marker is at or above firstDirty
// (dirty, for the map).
func cleanAborts(index []abortedTxn, firstDirty, firstUncleanable int64) (entries []abortedTxn, all, dirty []txnAbort) {
	for _, a := range index {
		if a.firstOffset >= firstUncleanable {
			continue
		}
		ta := txnAbort{producerID: a.producerID, firstOffset: a.firstOffset, lastOffset: a.lastOffset, ref: len(entries)}
		entries, all = append(entries, a), append(all, ta)
		if a.lastOffset >= firstDirty {
			dirty = append(dirty, ta)
		}
	}
	return entries, all, dirty
}

// producersLast says whether a pass must keep batch h, empty if need be,
// for the producer state (Kafka's lastRecordsOfActiveProducers): the
// producer's newest data batch, or, for a producer with none remembered,
// its markers of its current epoch (the epoch fences zombies).
func (job *cleanJob) producersLast(h record.Header) bool {
	if h.ProducerID < 0 {
		return false
	}
	if last, ok := job.liveLast[h.ProducerID]; ok {
		return last == h.LastOffset()
	}
	epoch, ok := job.markerEpoch[h.ProducerID]
	return ok && h.Control() && h.ProducerEpoch == epoch
}

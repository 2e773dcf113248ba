package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnOffsetCommit: a producer's TxnOffsetCommit through a real broker
// is written to __consumer_offsets and stays pending (OffsetFetch
// require_stable answers UNSTABLE_OFFSET_COMMIT) until its COMMIT marker is
// in the partition (WriteTxnMarkers, which tells the coordinator:
// CompleteTxn); after a restart the load finds the marker, and an
// open transaction without one is pending again. A producer epoch older
// than the partition has seen is INVALID_PRODUCER_EPOCH.
func TestTxnOffsetCommit(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}
	b := startBroker(t, dir, props)
	cl := newClient(t, b)
	createTopic(t, cl, "tt", 2, nil)
	coordinatorReady(t, cl, "tg")

	ipid := kmsg.NewPtrInitProducerIDRequest()
	ipid.TransactionTimeoutMillis = 60000
	ir := rawRequest(t, b.Addr().String(), ipid).(*kmsg.InitProducerIDResponse)
	if ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v", kerr.ErrorForCode(ir.ErrorCode))
	}
	pid, epoch := ir.ProducerID, ir.ProducerEpoch

	commit := func(b *Broker, epoch int16, offsets map[int32]int64) []int16 {
		t.Helper()
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, "tx", "tg", pid, epoch
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "tt"
		for p := range int32(2) {
			if o, ok := offsets[p]; ok {
				rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch = p, o, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
		}
		req.Topics = append(req.Topics, rt)
		resp := rawRequest(t, b.Addr().String(), req).(*kmsg.TxnOffsetCommitResponse)
		var codes []int16
		for _, p := range resp.Topics[0].Partitions {
			codes = append(codes, p.ErrorCode)
		}
		return codes
	}
	// fetch answers OffsetFetch v7 for tt/0 and tt/1: offset, or -2 for
	// UNSTABLE_OFFSET_COMMIT. It waits out a loading coordinator.
	fetch := func(b *Broker, stable bool) [2]int64 {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Version, req.Group, req.RequireStable = 7, "tg", stable
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = "tt", []int32{0, 1}
			req.Topics = append(req.Topics, rt)
			resp := rawRequest(t, b.Addr().String(), req).(*kmsg.OffsetFetchResponse)
			if resp.ErrorCode != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("OffsetFetch: %v", kerr.ErrorForCode(resp.ErrorCode))
				}
				continue
			}
			var out [2]int64
			for _, p := range resp.Topics[0].Partitions {
				switch p.ErrorCode {
				case 0:
					out[p.Partition] = p.Offset
				case kerr.UnstableOffsetCommit.Code:
					out[p.Partition] = -2
				default:
					t.Fatalf("partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
				}
			}
			return out
		}
	}
	want := func(got, want [2]int64, what string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}

	// Two commits of one transaction: the second batch continues the
	// producer's sequence on the partition.
	if c := commit(b, epoch, map[int32]int64{0: 10}); c[0] != 0 {
		t.Fatalf("first commit: %v", kerr.ErrorForCode(c[0]))
	}
	if c := commit(b, epoch, map[int32]int64{0: 11, 1: 20}); c[0] != 0 || c[1] != 0 {
		t.Fatalf("second commit: %v", c)
	}
	want(fetch(b, true), [2]int64{-2, -2}, "pending, require_stable")
	want(fetch(b, false), [2]int64{-1, -1}, "pending")

	// The COMMIT marker through WriteTxnMarkers, as the transaction
	// coordinator sends it: the leader appends it and tells the group
	// coordinator (CompleteTxn).
	wm := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = pid, epoch, true, 0
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "__consumer_offsets", []int32{0}
	mk.Topics = append(mk.Topics, mt)
	wm.Markers = append(wm.Markers, mk)
	wr := rawRequest(t, b.Addr().String(), wm).(*kmsg.WriteTxnMarkersResponse)
	if c := wr.Markers[0].Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("WriteTxnMarkers: %v", kerr.ErrorForCode(c))
	}
	want(fetch(b, true), [2]int64{11, 20}, "committed")

	// A new transaction left open across a restart.
	if c := commit(b, epoch, map[int32]int64{0: 30}); c[0] != 0 {
		t.Fatalf("third commit: %v", kerr.ErrorForCode(c[0]))
	}
	b.Close()
	b = startBroker(t, dir, props)
	want(fetch(b, true), [2]int64{-2, 20}, "after restart, require_stable")
	want(fetch(b, false), [2]int64{11, 20}, "after restart")

	// A newer epoch of the producer fences the older one.
	if c := commit(b, epoch+1, map[int32]int64{1: 40}); c[0] != 0 {
		t.Fatalf("commit with a newer epoch: %v", kerr.ErrorForCode(c[0]))
	}
	if c := commit(b, epoch, map[int32]int64{1: 41}); c[0] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("commit with the older epoch: %v", kerr.ErrorForCode(c[0]))
	}
}

// TestTxnOffsetCommitEndTxn: the whole path of a consume-transform-produce
// transaction's offsets through one broker: InitProducerId with a
// transactional id, AddOffsetsToTxn, TxnOffsetCommit, EndTxn; the
// transaction coordinator's markers (WriteTxnMarkers) make a committed
// transaction's offsets visible and drop an aborted one's.
func TestTxnOffsetCommitEndTxn(t *testing.T) {
	props := map[string]string{"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
		"transaction.state.log.num.partitions": "1", "transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr": "1"}
	b := startBroker(t, t.TempDir(), props)
	cl := newClient(t, b)
	createTopic(t, cl, "tt", 1, nil)
	coordinatorReady(t, cl, "tg")
	addr := b.Addr().String()
	// retry sends a request until its code is not a retriable one.
	retry := func(what string, send func() int16) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			c := send()
			if c == 0 {
				return
			}
			if e := kerr.ErrorForCode(c); !kerr.IsRetriable(e) && e != kerr.ConcurrentTransactions || time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, e)
			}
		}
	}
	retry("FindCoordinator (transaction)", func() int16 { // the first ask creates __transaction_state
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, 1, []string{"tx"}
		r := rawRequest(t, addr, req).(*kmsg.FindCoordinatorResponse)
		if len(r.Coordinators) != 1 {
			return kerr.UnknownServerError.Code
		}
		return r.Coordinators[0].ErrorCode
	})
	var pid int64
	var epoch int16
	retry("InitProducerId", func() int16 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("tx"), 60000
		r := rawRequest(t, addr, req).(*kmsg.InitProducerIDResponse)
		pid, epoch = r.ProducerID, r.ProducerEpoch
		return r.ErrorCode
	})
	stable := func() int64 {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Version, req.Group, req.RequireStable = 7, "tg", true
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = "tt", []int32{0}
			req.Topics = append(req.Topics, rt)
			r := rawRequest(t, addr, req).(*kmsg.OffsetFetchResponse)
			if r.ErrorCode == 0 && r.Topics[0].Partitions[0].ErrorCode == 0 {
				return r.Topics[0].Partitions[0].Offset
			}
			if time.Now().After(deadline) {
				t.Fatalf("OffsetFetch require_stable: %v %v", kerr.ErrorForCode(r.ErrorCode), kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
			}
		}
	}
	txn := func(offset int64, commit bool) {
		t.Helper()
		retry("AddOffsetsToTxn", func() int16 {
			req := kmsg.NewPtrAddOffsetsToTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "tx", pid, epoch, "tg"
			return rawRequest(t, addr, req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
		})
		retry("TxnOffsetCommit", func() int16 {
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, "tx", "tg", pid, epoch
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = offset, -1
			rt.Topic, rt.Partitions = "tt", append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return rawRequest(t, addr, req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		})
		retry("EndTxn", func() int16 {
			req := kmsg.NewPtrEndTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "tx", pid, epoch, commit
			return rawRequest(t, addr, req).(*kmsg.EndTxnResponse).ErrorCode
		})
	}
	txn(7, true)
	if got := stable(); got != 7 {
		t.Fatalf("after a committed transaction: %d, want 7", got)
	}
	txn(99, false)
	if got := stable(); got != 7 {
		t.Fatalf("after an aborted transaction: %d, want 7", got)
	}
}

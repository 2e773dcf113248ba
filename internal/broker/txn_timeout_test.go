package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnTimeoutAbort: a producer opens a transaction, writes and dies
// (raw requests, never an EndTxn); after its transaction.timeout.ms the
// coordinator aborts it with the producer fenced (epoch bumped), the
// last stable offset moves past it, and a read_committed consumer sees
// the later committed transaction of another producer and never the dead
// one's record.
func TestTxnTimeoutAbort(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{
		"transaction.state.log.num.partitions":                        "1",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "50",
	})
	addr := b.Addr().String()
	createTopic(t, newClient(t, b), "out", 2, nil)
	id := "tx-dies"
	var pid int64
	var epoch int16
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fc := kmsg.NewPtrFindCoordinatorRequest() // creates __transaction_state
		fc.Version, fc.CoordinatorType, fc.CoordinatorKey = 3, 1, id
		rawRequest(t, addr, fc)
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = 4, &id, 300
		r := rawRequest(t, addr, ip).(*kmsg.InitProducerIDResponse)
		if r.ErrorCode == 0 {
			pid, epoch = r.ProducerID, r.ProducerEpoch
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, id, pid, epoch
	ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "out", Partitions: []int32{0}}}
	if code := rawRequest(t, addr, ap).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis, req.TransactionID = 9, -1, 5000, &id
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "out"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = txnRecordBatch(pid, epoch, 0, "dead")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	if code := rawRequest(t, addr, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(code))
	}
	// The producer dies. Its transaction is aborted after 300 ms.
	adm := kadm.NewClient(newClient(t, b))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d := describeTxn(t, adm, id)
		if d.State == "CompleteAbort" {
			if d.ProducerEpoch != epoch+1 || d.ProducerID != pid {
				t.Fatalf("aborted with %+v, want producer %d epoch %d", d, pid, epoch+1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not aborted: %+v", d)
		}
	}
	// The fenced producer's commit is refused.
	et := kmsg.NewPtrEndTxnRequest()
	et.Version, et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = 3, id, pid, epoch, true
	if code := rawRequest(t, addr, et).(*kmsg.EndTxnResponse).ErrorCode; code != kerr.ProducerFenced.Code {
		t.Fatalf("the dead producer's commit: %v", kerr.ErrorForCode(code))
	}
	other := newTxnClient(t, b, kgo.TransactionalID("tx-lives"), kgo.DefaultProduceTopic("out"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	txnProduce(t, other, true, "ok0", "ok1")
	got := readAll(t, []string{addr}, "out", kgo.ReadCommitted(), 2)
	if !slices.Equal(got, []string{"ok0", "ok1"}) {
		t.Fatalf("read_committed: %v", got)
	}
}

package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// txnRecordBatch is a transactional batch of producer pid at epoch.
func txnRecordBatch(pid int64, epoch int16, seq int32, value string) []byte {
	b := recordtest.Idempotent(recordBatch(value), pid, epoch, seq)
	b[22] |= 0x10 // attributes, low byte: transactional
	record.SetCRC(b)
	return b
}

// TestTxnVerifyPartition (KIP-890 part 1): a leader refuses a
// transactional batch for a partition its producer did not add to its
// transaction (INVALID_TXN_STATE), asking the coordinator — on another
// broker, through AddPartitionsToTxn v4 verify-only, and on itself,
// directly — and accepts it once the partition is added.
func TestTxnVerifyPartition(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"transaction.state.log.num.partitions": "1"})
	byID := map[int32]*Broker{}
	for _, b := range brokers {
		byID[b.NodeID()] = b
	}
	any := brokers[0].Addr().String()
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version, ct.TimeoutMillis = 4, 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "v", 6, 1
	ct.Topics = append(ct.Topics, rt)
	rawRequest(t, controllerOf(t, brokers).Addr().String(), ct)

	// The transactional id's coordinator, once __transaction_state is up.
	var coord int32
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.Version, fc.CoordinatorType, fc.CoordinatorKey = 3, 1, "tx-v"
		r := rawRequest(t, any, fc).(*kmsg.FindCoordinatorResponse)
		if r.ErrorCode == 0 {
			coord = r.NodeID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coordinator: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	var pid int64
	var epoch int16
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		id := "tx-v"
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = 4, &id, 60000
		r := rawRequest(t, byID[coord].Addr().String(), ip).(*kmsg.InitProducerIDResponse)
		if r.ErrorCode == 0 {
			pid, epoch = r.ProducerID, r.ProducerEpoch
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	// One partition led by the coordinator's broker, one by another.
	leaders := map[bool]int32{} // local → partition
	for deadline := time.Now().Add(30 * time.Second); len(leaders) < 2; time.Sleep(50 * time.Millisecond) {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("v")
		md.Topics = append(md.Topics, mt)
		for _, tm := range rawRequest(t, any, md).(*kmsg.MetadataResponse).Topics {
			for _, p := range tm.Partitions {
				if p.Leader >= 0 {
					leaders[p.Leader == coord] = p.Partition
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaders of v: %v", leaders)
		}
	}
	leaderOf := func(p int32) *Broker {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		for _, tm := range rawRequest(t, any, md).(*kmsg.MetadataResponse).Topics {
			for _, pm := range tm.Partitions {
				if tm.Topic != nil && *tm.Topic == "v" && pm.Partition == p {
					return byID[pm.Leader]
				}
			}
		}
		t.Fatalf("no leader for v-%d", p)
		return nil
	}
	produce := func(p int32) int16 {
		id := "tx-v"
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis, req.TransactionID = 9, -1, 5000, &id
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "v"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, txnRecordBatch(pid, epoch, 0, "x")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return rawRequest(t, leaderOf(p).Addr().String(), req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	for _, local := range []bool{false, true} {
		p := leaders[local]
		if code := produce(p); code != kerr.InvalidTxnState.Code {
			t.Fatalf("local=%v: produce before AddPartitionsToTxn: %v", local, kerr.ErrorForCode(code))
		}
		ap := kmsg.NewPtrAddPartitionsToTxnRequest()
		ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, "tx-v", pid, epoch
		ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "v", Partitions: []int32{p}}}
		if code := rawRequest(t, byID[coord].Addr().String(), ap).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
		}
		if code := produce(p); code != 0 {
			t.Fatalf("local=%v: produce after AddPartitionsToTxn: %v", local, kerr.ErrorForCode(code))
		}
	}
}

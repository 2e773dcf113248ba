package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newTxnClient is a client for a transactional producer (newClient
// disables idempotence).
func newTxnClient(t testing.TB, b *Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr().String())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// describeTxn describes one transactional id, retrying while its
// coordinator is not known yet.
func describeTxn(t *testing.T, adm *kadm.Client, id string) kadm.DescribedTransaction {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		d, err := adm.DescribeTransactions(ctx, id)
		cancel()
		if err == nil && d[id].Err == nil {
			return d[id]
		}
		if time.Now().After(deadline) {
			t.Fatalf("describe %s: %v %+v", id, err, d)
		}
	}
}

// TestTxnCoordinatorOnBroker: a lone server creates __transaction_state
// (compacted, replicas lowered to one) on the first FindCoordinator of a
// transactional id, franz-go's transactional producer initializes, adds a
// partition, produces and ends its transaction, and DescribeTransactions
// and ListTransactions show it; clients may not produce to the topic.
func TestTxnCoordinatorOnBroker(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "4"})
	admCl := newClient(t, b)
	createTopic(t, admCl, "out", 2, nil)
	cl := newTxnClient(t, b, kgo.TransactionalID("tx-broker"), kgo.TransactionTimeout(30*time.Second),
		kgo.DefaultProduceTopic("out"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(admCl)
	d := describeTxn(t, adm, "tx-broker")
	if d.State != "Ongoing" || d.TimeoutMillis != 30000 || d.ProducerEpoch != 0 || len(d.Topics["out"]) != 1 || d.StartTimestamp <= 0 {
		t.Fatalf("ongoing: %+v", d)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	d = describeTxn(t, adm, "tx-broker")
	if d.State != "PrepareCommit" && d.State != "CompleteCommit" {
		t.Fatalf("after commit: %+v", d)
	}
	lt, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil || len(lt) != 1 || lt.TransactionalIDs()[0] != "tx-broker" {
		t.Fatalf("list: %+v %v", lt, err)
	}
	lt, err = adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil || len(lt) != 0 {
		t.Fatalf("list Ongoing: %+v %v", lt, err)
	}
	// The topic as FindCoordinator created it.
	rc, err := adm.DescribeTopicConfigs(ctx, "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{}
	for _, c := range rc[0].Configs {
		if c.Value != nil {
			cfg[c.Key] = *c.Value
		}
	}
	if cfg["cleanup.policy"] != "compact" || cfg["min.insync.replicas"] != "1" {
		t.Errorf("__transaction_state configs: %v", cfg)
	}
	td, err := adm.ListTopicsWithInternal(ctx, "__transaction_state")
	if err != nil || len(td["__transaction_state"].Partitions) != 4 || !td["__transaction_state"].IsInternal {
		t.Fatalf("__transaction_state: %+v %v", td, err)
	}
	// Clients may not write to it.
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "__transaction_state"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = recordBatch("x")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := rawRequest(t, b.Addr().String(), req).(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.InvalidTopicException.Code {
		t.Errorf("produce to __transaction_state: %v", kerr.ErrorForCode(code))
	}
}

// TestTxnMarkersSkipDeletedTopic: a topic of an open transaction is
// deleted before the commit; its markers are dropped (the metadata cache no
// longer knows the partition), the others written, and the transaction
// completes.
func TestTxnMarkersSkipDeletedTopic(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "1"})
	admCl := newClient(t, b)
	createTopic(t, admCl, "keep", 1, nil)
	createTopic(t, admCl, "gone", 1, nil)
	cl := newTxnClient(t, b, kgo.TransactionalID("tx-del"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "keep", Value: []byte("k")}, &kgo.Record{Topic: "gone", Value: []byte("g")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(admCl)
	if res, err := adm.DeleteTopics(ctx, "gone"); err != nil || res["gone"].Err != nil {
		t.Fatalf("delete: %v %+v", err, res)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := b.cache.Partition("gone", 0); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gone-0 still in the metadata cache")
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d := describeTxn(t, adm, "tx-del")
		if d.State == "CompleteCommit" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %+v", d)
		}
	}
	if got := readAll(t, []string{b.Addr().String()}, "keep", kgo.ReadCommitted(), 1); len(got) != 1 || got[0] != "k" {
		t.Fatalf("read_committed keep: %v", got)
	}
}

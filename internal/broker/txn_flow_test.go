package broker

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnProduce runs one transaction of values over the topic's partitions
// (round-robin by the record's Partition) and ends it.
func txnProduce(t *testing.T, cl *kgo.Client, commit bool, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i, v := range values {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

// readAll consumes topic from the start with the isolation level until
// want records came, and returns their values sorted.
func readAll(t *testing.T, seeds []string, topic string, level kgo.IsolationLevel, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(level),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records: %v", len(got), want, got)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Anything beyond want would come in the same or the next fetch.
	sctx, scancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	cl.PollFetches(sctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	scancel()
	slices.Sort(got)
	return got
}

func values(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

// TestTxnCommitAbortFence: franz-go's transactional producer commits,
// aborts and commits; a read_committed consumer sees exactly the committed
// records, a read_uncommitted one all of them; a second producer with the
// same transactional id fences the first, whose later commit fails.
func TestTxnCommitAbortFence(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "3"})
	createTopic(t, newClient(t, b), "out", 2, nil)
	opts := []kgo.Opt{kgo.TransactionalID("tx-flow"), kgo.DefaultProduceTopic("out"), kgo.RecordPartitioner(kgo.ManualPartitioner())}
	p1 := newTxnClient(t, b, opts...)
	txnProduce(t, p1, true, values("c", 5)...)
	txnProduce(t, p1, false, values("a", 5)...)
	txnProduce(t, p1, true, "d0")
	seeds := []string{b.Addr().String()}
	want := append(values("c", 5), "d0")
	slices.Sort(want)
	if got := readAll(t, seeds, "out", kgo.ReadCommitted(), len(want)); !slices.Equal(got, want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	if got := readAll(t, seeds, "out", kgo.ReadUncommitted(), 11); len(got) != 11 {
		t.Fatalf("read_uncommitted: %v", got)
	}

	// A zombie: p1 opens a transaction, p2 (same id) initializes and
	// fences it; p1's commit fails and its records never show.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p1.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p1.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p2 := newTxnClient(t, b, opts...)
	txnProduce(t, p2, true, "p2")
	err := p1.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the zombie's commit: %v", err)
	}
	want = append(want, "p2")
	slices.Sort(want)
	if got := readAll(t, seeds, "out", kgo.ReadCommitted(), len(want)); !slices.Equal(got, want) {
		t.Fatalf("read_committed after the zombie: %v, want %v", got, want)
	}
	d := describeTxn(t, kadm.NewClient(newClient(t, b)), "tx-flow")
	if d.State != "CompleteCommit" && d.State != "PrepareCommit" {
		t.Errorf("state %+v", d)
	}
}

// TestTxnCoordinatorFailover: the coordinator's broker writes PrepareCommit
// and crashes before any marker (its marker clients are closed first); the
// new leader of the __transaction_state partition loads it, writes the
// markers and CompleteCommit, and a read_committed consumer sees the
// transaction; the producer carries on with the new coordinator.
func TestTxnCoordinatorFailover(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"transaction.state.log.num.partitions": "1"})
	var seeds []string
	for _, b := range brokers {
		seeds = append(seeds, b.Addr().String())
	}
	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if res, err := adm.CreateTopic(ctx, 2, 3, nil, "out"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID("tx-fo"), kgo.DefaultProduceTopic("out"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i, v := range values("f", 10) {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte(v)})
	}
	if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	d := describeTxn(t, adm, "tx-fo")
	var coord *Broker
	for _, b := range brokers {
		if b.NodeID() == d.Coordinator {
			coord = b
		}
	}
	if coord == nil {
		t.Fatalf("coordinator %d not among the brokers", d.Coordinator)
	}
	coord.txnClients.close() // its markers fail from now on
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if d := describeTxn(t, adm, "tx-fo"); d.State != "PrepareCommit" {
		t.Fatalf("before the crash: %+v", d)
	}
	crash(t, coord)
	var live []string
	for _, b := range brokers {
		if b != coord {
			live = append(live, b.Addr().String())
		}
	}
	// A new client of the live brokers each time: kgo keeps asking a
	// coordinator it found, even one that no longer answers.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		liveCl, err := kgo.NewClient(kgo.SeedBrokers(live...))
		if err != nil {
			t.Fatal(err)
		}
		d, err := kadm.NewClient(liveCl).DescribeTransactions(ctx, "tx-fo")
		liveCl.Close()
		if err == nil && d["tx-fo"].Err == nil && d["tx-fo"].State == "CompleteCommit" {
			if d["tx-fo"].Coordinator == coord.NodeID() {
				t.Fatalf("the crashed broker answered: %+v", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never completed after the failover: %+v %v", d, err)
		}
	}
	if got := readAll(t, live, "out", kgo.ReadCommitted(), 10); len(got) != 10 {
		t.Fatalf("read_committed after the failover: %v", got)
	}
	// p still has the crashed coordinator cached. kgo looks a cached
	// coordinator up in its broker list without a metadata load and then
	// again with one; a metadata refresh between the two (the crashed
	// broker left the cluster) fails AddPartitionsToTxn with kgo's
	// "unknown broker", which it does not retry. Once p's metadata has
	// dropped the broker, the lookup misses and p asks FindCoordinator.
	// (A Metadata request through p itself: kadm's would be answered from
	// p's cache.)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		m, err := req.RequestWith(ctx, p)
		if err == nil && !slices.ContainsFunc(m.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == coord.NodeID() }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the crashed broker %d stays in p's metadata: %v", coord.NodeID(), err)
		}
	}
	txnProduce(t, p, true, "after")
	if got := readAll(t, live, "out", kgo.ReadCommitted(), 11); len(got) != 11 || !slices.Contains(got, "after") {
		t.Fatalf("read_committed after the next transaction: %v", got)
	}
}

// TestTxnCoordinatorFailoverOngoing: the coordinator's broker crashes
// while a transaction is open; the producer's EndTxn finds the new
// coordinator, which loaded the transaction (Ongoing, its partitions) and
// commits it.
func TestTxnCoordinatorFailoverOngoing(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"transaction.state.log.num.partitions": "1"})
	var seeds []string
	for _, b := range brokers {
		seeds = append(seeds, b.Addr().String())
	}
	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if res, err := adm.CreateTopic(ctx, 2, 3, nil, "out"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID("tx-og"), kgo.DefaultProduceTopic("out"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i, v := range values("g", 6) {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte(v)})
	}
	if err := p.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	d := describeTxn(t, adm, "tx-og")
	var live []string
	for _, b := range brokers {
		if b.NodeID() == d.Coordinator {
			crash(t, b)
		} else {
			live = append(live, b.Addr().String())
		}
	}
	if len(live) != 2 {
		t.Fatalf("coordinator %d not among the brokers", d.Coordinator)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, live, "out", kgo.ReadCommitted(), 6); !slices.Equal(got, values("g", 6)) {
		t.Fatalf("read_committed after the failover: %v", got)
	}
}

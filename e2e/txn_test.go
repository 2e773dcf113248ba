package e2e

// Transactions (issue 19) against three `samsa server` processes, with
// franz-go's transactional clients: a consume-transform-produce pipeline
// (GroupTransactSession) that aborts every few transactions, also across
// SIGKILL of the transaction coordinator's broker in the middle of a
// commit and of an output partition's leader; a zombie producer fenced by
// its successor; a producer that dies inside a transaction.

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnProps are the server settings of the transaction tests: few internal
// partitions (each is loaded by its coordinator), quick rebalances and a
// quick timed-out-transaction check.
var txnProps = []string{
	"group.initial.rebalance.delay.ms=200",
	"offsets.topic.num.partitions=6",
	"transaction.state.log.num.partitions=6",
	"transaction.abort.timed.out.transaction.cleanup.interval.ms=500",
}

func startTxnCluster(t *testing.T) *cluster {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, txnProps...)
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	return c
}

// produceInput writes n records "in-000000".. round robin to topic, plain
// (no transaction).
func produceInput(ctx context.Context, t *testing.T, addrs []string, topic string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: fmt.Appendf(nil, "in-%06d", i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// etlStats counts the pipeline's transactions.
type etlStats struct {
	commits, aborts, failed atomic.Int64
}

// etl runs one worker of the pipeline: read committed records of in as
// member of group "etl", write each to out inside a transaction together
// with the group's offsets, and abort every abortEvery-th transaction (its
// records are read again and written in a later one). A transaction whose
// end fails (its coordinator died under it, say) ends the session, and the
// worker starts again as a restarted application would: its new producer
// fences the old one, whose transaction is then committed or aborted.
func etl(ctx context.Context, t *testing.T, addrs []string, txnID, in, out string, abortEvery int64, st *etlStats, opts ...kgo.Opt) {
	n := int64(1)
	for ctx.Err() == nil {
		sess, err := kgo.NewGroupTransactSession(append([]kgo.Opt{
			kgo.SeedBrokers(addrs...),
			kgo.TransactionalID(txnID),
			kgo.TransactionTimeout(20 * time.Second),
			kgo.ConsumerGroup("etl"), kgo.ConsumeTopics(in),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RequireStableFetchOffsets(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		}, opts...)...)
		if err != nil {
			t.Error(err)
			return
		}
		etlSession(ctx, t, sess, txnID, out, abortEvery, &n, st)
		sess.Close()
	}
}

// etlSession runs transactions on sess until ctx ends or one fails.
func etlSession(ctx context.Context, t *testing.T, sess *kgo.GroupTransactSession, txnID, out string, abortEvery int64, n *int64, st *etlStats) {
	for ctx.Err() == nil {
		fs := sess.PollRecords(ctx, 50) // small transactions: many of them
		if ctx.Err() != nil || fs.Empty() {
			continue
		}
		if err := sess.Begin(); err != nil {
			t.Errorf("%s: begin: %v", txnID, err)
			return
		}
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Topic: out, Value: r.Value}, nil)
		})
		try := kgo.TryCommit
		if *n%abortEvery == 0 {
			try = kgo.TryAbort
		}
		*n++
		committed, err := sess.End(ctx, try)
		switch {
		case err != nil:
			st.failed.Add(1)
			t.Logf("%s: end: %v; starting a new session", txnID, err)
			return
		case committed:
			st.commits.Add(1)
		default:
			st.aborts.Add(1)
		}
	}
}

// waitConsumed waits until group's committed offsets on topic reach its
// end offsets. Each look is a new client: kgo keeps a coordinator it once
// found, even after its broker was killed.
func waitConsumed(ctx context.Context, t *testing.T, addrs []string, group, topic string, what func() string) {
	t.Helper()
	var last error
	for {
		done, err := consumed(ctx, addrs, group, topic)
		if done {
			return
		}
		if err != nil {
			last = err
		}
		if ctx.Err() != nil {
			t.Fatalf("group %s never consumed all of %s: %s; last error: %v", group, topic, what(), last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// consumed reports whether group's committed offsets on topic reach its
// end offsets.
func consumed(ctx context.Context, addrs []string, group, topic string) (bool, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return false, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(rctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return false, err
	}
	offs, err := adm.FetchOffsets(rctx, group)
	if err != nil {
		return false, err
	}
	done := true
	ends.Each(func(e kadm.ListedOffset) {
		if o, ok := offs.Lookup(topic, e.Partition); !ok || o.At < e.Offset {
			done = false
		}
	})
	return done, nil
}

// readCommitted reads every partition of topic as a read_committed
// consumer, up to an "end" record it first writes to each partition (plain,
// after everything else), and returns the values read in each partition.
// readUncommitted does the same without the isolation level.
func readTopic(ctx context.Context, t *testing.T, addrs []string, topic string, committed bool) map[int32][]string {
	t.Helper()
	adm := kadm.NewClient(mustClient(t, addrs))
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	parts := td[topic].Partitions.Numbers()
	pr, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	for _, p := range parts {
		if err := pr.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("end")}).FirstErr(); err != nil {
			t.Fatalf("end marker to %s/%d: %v", topic, p, err)
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got, ended := map[int32][]string{}, map[int32]bool{}
	for len(ended) < len(parts) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d partitions of %s to their end", len(ended), len(parts), topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "end" {
				ended[r.Partition] = true
			} else if !ended[r.Partition] {
				got[r.Partition] = append(got[r.Partition], string(r.Value))
			}
		})
	}
	return got
}

// checkOnce fails unless every value in want appears exactly once in got.
func checkOnce(t *testing.T, got map[int32][]string, n int) {
	t.Helper()
	count := map[string]int{}
	for _, vs := range got {
		for _, v := range vs {
			count[v]++
		}
	}
	missing, dups, bad := 0, 0, 0
	for i := range n {
		v := fmt.Sprintf("in-%06d", i)
		switch c := count[v]; {
		case c == 0:
			if missing < 5 {
				t.Errorf("%s missing from the output", v)
			}
			missing++
		case c > 1:
			if dups < 5 {
				t.Errorf("%s in the output %d times", v, c)
			}
			dups++
		}
		delete(count, v)
	}
	for v := range count {
		if bad < 5 {
			t.Errorf("%q in the output was never an input", v)
		}
		bad++
	}
	if missing+dups+bad > 0 {
		t.Fatalf("of %d inputs: %d missing, %d duplicated; %d unknown values", n, missing, dups, bad)
	}
}

// txnFault is what a pipeline run does to the cluster while it runs.
type txnFault int

const (
	noFault txnFault = iota
	killCoordinatorInCommit
	killOutputLeader
)

func testETL(t *testing.T, fault txnFault) {
	c := startTxnCluster(t)
	all := c.addrs(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	adm := kadm.NewClient(mustClient(t, all))
	for _, topic := range []string{"etl-in", "etl-out"} {
		if res, err := adm.CreateTopic(ctx, 4, 3, nil, topic); err != nil || res.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, res.Err)
		}
	}
	const n = 4000
	produceInput(ctx, t, all, "etl-in", n)

	var st etlStats
	var killed atomic.Int32
	killed.Store(-1)
	kill := func(id int32, why string) {
		if killed.CompareAndSwap(-1, id) {
			t.Logf("SIGKILL broker %d (%s) after %d commits, %d aborts", id, why, st.commits.Load(), st.aborts.Load())
			c.procs[id].kill()
		}
	}
	var opts []kgo.Opt
	if fault == killCoordinatorInCommit {
		// When worker etl-0 has written its fifth EndTxn, kill the broker
		// that coordinates its transactions, at once: the commit is
		// somewhere between the prepare record, the markers and the
		// complete record. The coordinator is looked up after the first.
		var ends atomic.Int32
		var coordinator atomic.Int32
		coordinator.Store(-1)
		opts = append(opts, kgo.WithHooks(endTxnHook(func() {
			switch ends.Add(1) {
			case 1:
				go func() {
					if co, ok := adm.FindTxnCoordinators(ctx, "etl-0")["etl-0"]; ok && co.Err == nil {
						coordinator.Store(co.NodeID)
					}
				}()
			case 5:
				if id := coordinator.Load(); id >= 0 {
					kill(id, "coordinator of etl-0, in EndTxn")
				}
			}
		})))
	}
	wctx, wcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var o []kgo.Opt
			if i == 0 {
				o = opts
			}
			etl(wctx, t, all, fmt.Sprintf("etl-%d", i), "etl-in", "etl-out", 4, &st, o...)
		}()
	}
	if fault == killOutputLeader {
		for st.commits.Load() < 5 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		td, err := adm.ListTopics(ctx, "etl-out")
		if err != nil {
			t.Fatal(err)
		}
		kill(td["etl-out"].Partitions[0].Leader, "leader of etl-out/0")
	}
	waitConsumed(ctx, t, all, "etl", "etl-in", func() string {
		return fmt.Sprintf("%d commits, %d aborts, %d failed", st.commits.Load(), st.aborts.Load(), st.failed.Load())
	})
	wcancel()
	wg.Wait()
	t.Logf("pipeline done: %d commits, %d aborts, %d failed ends", st.commits.Load(), st.aborts.Load(), st.failed.Load())
	if fault != noFault && killed.Load() < 0 {
		t.Fatal("the fault was never injected")
	}
	if st.aborts.Load() == 0 {
		t.Fatal("no transaction was aborted: the test checks nothing about aborts")
	}
	live := c.addrs(killed.Load())
	checkOnce(t, readTopic(ctx, t, live, "etl-out", true), n)
}

// endTxnHook calls fn after each EndTxn request the client writes.
type endTxnHook func()

func (h endTxnHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.EndTxn) && err == nil {
		h()
	}
}

// TestTransactionalETLExactlyOnce: two consume-transform-produce workers
// copy 4000 records, every fourth transaction aborted; a read_committed
// reader of the output sees each input exactly once.
func TestTransactionalETLExactlyOnce(t *testing.T) { testETL(t, noFault) }

// TestTransactionalETLCoordinatorKilledInCommit: the same, with the
// transaction coordinator's broker SIGKILLed right after a worker sent
// EndTxn; the new coordinator completes or aborts it.
func TestTransactionalETLCoordinatorKilledInCommit(t *testing.T) { testETL(t, killCoordinatorInCommit) }

// TestTransactionalETLOutputLeaderKilled: the same, with the leader of an
// output partition SIGKILLed while transactions write to it.
func TestTransactionalETLOutputLeaderKilled(t *testing.T) { testETL(t, killOutputLeader) }

// TestZombieProducerFenced: a producer opens a transaction and writes; a
// second producer with the same transactional id starts, which aborts the
// first one's transaction and fences its epoch, and commits. The first
// producer's later write and commit fail, and a read_committed reader sees
// only the second producer's record.
func TestZombieProducerFenced(t *testing.T) {
	c := startTxnCluster(t)
	all := c.addrs(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.createTopic(all, "zombie", 3)
	producer := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(all...), kgo.TransactionalID("z"), kgo.DefaultProduceTopic("zombie"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	old := producer()
	if err := old.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := old.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie-1")}).FirstErr(); err != nil {
		t.Fatalf("first producer's write: %v", err)
	}
	successor := producer()
	if err := successor.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := successor.ProduceSync(ctx, &kgo.Record{Value: []byte("live-1")}).FirstErr(); err != nil {
		t.Fatalf("successor's write: %v", err)
	}
	if err := successor.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("successor's commit: %v", err)
	}
	err := old.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie-2")}).FirstErr()
	if err == nil {
		err = old.EndTransaction(ctx, kgo.TryCommit)
	}
	if err == nil {
		t.Fatal("the fenced producer wrote and committed")
	}
	t.Logf("fenced producer: %v", err)
	got := readTopic(ctx, t, all, "zombie", true)
	for p, vs := range got {
		for _, v := range vs {
			if v != "live-1" {
				t.Errorf("read_committed sees %q in partition %d", v, p)
			}
		}
	}
	if n := len(got[0]) + len(got[1]) + len(got[2]); n != 1 {
		t.Errorf("read_committed sees %d records, want live-1 once: %v", n, got)
	}
}

// TestDeadProducerTransactionAborted: a producer writes inside a
// transaction and is never heard of again. While its transaction is open,
// the partition's last stable offset stays at its first record; once
// transaction.timeout.ms has passed the coordinator aborts it, the last
// stable offset reaches the high watermark, a read_committed reader sees
// only the records written outside it, and the producer, if it comes back,
// is fenced.
func TestDeadProducerTransactionAborted(t *testing.T) {
	c := startTxnCluster(t)
	all := c.addrs(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.createTopic(all, "hang", 3)
	dead, err := kgo.NewClient(kgo.SeedBrokers(all...), kgo.TransactionalID("h"), kgo.DefaultProduceTopic("hang"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(8*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	if err := dead.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := dead.ProduceSync(ctx, &kgo.Record{Value: []byte("open-1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(all...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "hang", Value: []byte("plain-1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(plain)
	lso := func() (int64, int64) {
		lsos, err := adm.ListCommittedOffsets(ctx, "hang")
		if err != nil {
			t.Fatal(err)
		}
		hws, err := adm.ListEndOffsets(ctx, "hang")
		if err != nil {
			t.Fatal(err)
		}
		l, _ := lsos.Lookup("hang", 0)
		h, _ := hws.Lookup("hang", 0)
		return l.Offset, h.Offset
	}
	if l, hw := lso(); l != 0 || hw != 2 {
		t.Fatalf("with the transaction open: last stable offset %d, high watermark %d; want 0 and 2", l, hw)
	}
	start := time.Now()
	for {
		l, hw := lso()
		if l == hw && hw > 2 { // the abort marker is written at 2
			t.Logf("aborted %v after the open transaction's write; last stable offset %d", time.Since(start).Round(time.Millisecond), l)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the dead producer's transaction never ended: last stable offset %d, high watermark %d", l, hw)
		}
		time.Sleep(200 * time.Millisecond)
	}
	dt, err := adm.DescribeTransactions(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := dt["h"]; !ok || d.State != "CompleteAbort" {
		t.Errorf("DescribeTransactions h: %+v, want state CompleteAbort", dt["h"])
	}
	got := readTopic(ctx, t, all, "hang", true)
	if len(got[0]) != 1 || got[0][0] != "plain-1" {
		t.Errorf("read_committed sees %v, want [plain-1]", got[0])
	}
	if err := dead.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Error("the timed-out producer committed")
	}
}

// TestLibrdkafkaTransactions: librdkafka's transactional producer commits,
// aborts and commits; its read_committed consumer reads each committed
// record once and no aborted one (testdata/rdkafka_txn.py, Debian's
// python3-confluent-kafka).
func TestLibrdkafkaTransactions(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import confluent_kafka").Run(); err != nil {
		requireOrSkip(t, "SAMSA_REQUIRE_CONFLUENT_KAFKA", "python3-confluent-kafka", err)
	}
	c := startTxnCluster(t)
	all := c.addrs(-1)
	c.createTopic(all, "rdk", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "testdata/rdkafka_txn.py", strings.Join(all, ","), "rdk", "3")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rdkafka_txn.py: %v\n%s", err, stderr.String())
	}
	count := map[string]int{}
	for _, v := range strings.Fields(string(out)) {
		count[v]++
	}
	for i := range 200 {
		v := fmt.Sprintf("commit-%d", i)
		if count[v] != 1 {
			t.Errorf("%s read %d times", v, count[v])
		}
		delete(count, v)
	}
	if len(count) > 0 {
		t.Errorf("read records never committed: %v", count)
	}
}

package broker

import (
	"cmp"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetsTxnProps: one partition each for __consumer_offsets and
// __transaction_state, on one broker.
var offsetsTxnProps = map[string]string{"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
	"transaction.state.log.num.partitions": "1", "transaction.state.log.replication.factor": "1",
	"transaction.state.log.min.isr": "1"}

// offsetsTxnClient speaks a transactional producer's requests for
// transactional id "tx" and group "tg" (or group), offsets of topic "tt":
// the transaction's to addr, the group's to gaddr (addr if empty).
type offsetsTxnClient struct {
	t     *testing.T
	addr  string
	gaddr string
	group string
	pid   int64
	epoch int16
}

func (c *offsetsTxnClient) groupAddr() string { return cmp.Or(c.gaddr, c.addr) }
func (c *offsetsTxnClient) groupID() string   { return cmp.Or(c.group, "tg") }

// retry sends until the code is not a retriable one; it returns the last.
func (c *offsetsTxnClient) retry(send func() int16) int16 {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code := send()
		e := kerr.ErrorForCode(code)
		if code == 0 || !kerr.IsRetriable(e) && e != kerr.ConcurrentTransactions || time.Now().After(deadline) {
			return code
		}
	}
}

func (c *offsetsTxnClient) must(what string, code int16) {
	c.t.Helper()
	if code != 0 {
		c.t.Fatalf("%s: %v", what, kerr.ErrorForCode(code))
	}
}

// init finds the transaction coordinator (the first ask creates
// __transaction_state) and gets the producer id and a new epoch.
func (c *offsetsTxnClient) init() {
	c.t.Helper()
	c.must("FindCoordinator", c.retry(func() int16 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, 1, []string{"tx"}
		r := rawRequest(c.t, c.addr, req).(*kmsg.FindCoordinatorResponse)
		if len(r.Coordinators) != 1 {
			return kerr.UnknownServerError.Code
		}
		return r.Coordinators[0].ErrorCode
	}))
	c.must("InitProducerId", c.retry(func() int16 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("tx"), 60000
		r := rawRequest(c.t, c.addr, req).(*kmsg.InitProducerIDResponse)
		c.pid, c.epoch = r.ProducerID, r.ProducerEpoch
		return r.ErrorCode
	}))
}

func (c *offsetsTxnClient) addOffsets() {
	c.t.Helper()
	c.must("AddOffsetsToTxn", c.retry(func() int16 {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "tx", c.pid, c.epoch, c.groupID()
		return rawRequest(c.t, c.addr, req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}))
}

// commit sends TxnOffsetCommit v3 (no member: a producer outside the
// group) with the given epoch and answers the partitions' codes.
func (c *offsetsTxnClient) commit(epoch int16, offsets map[int32]int64) map[int32]int16 {
	c.t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, "tx", c.groupID(), c.pid, epoch
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "tt"
	for p, o := range offsets {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, o, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	out := map[int32]int16{}
	for _, p := range rawRequest(c.t, c.groupAddr(), req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions {
		out[p.Partition] = p.ErrorCode
	}
	return out
}

func (c *offsetsTxnClient) mustCommit(offsets map[int32]int64) {
	c.t.Helper()
	for p, code := range c.commit(c.epoch, offsets) {
		c.must("TxnOffsetCommit partition "+string(rune('0'+p)), code)
	}
}

func (c *offsetsTxnClient) end(commit bool) {
	c.t.Helper()
	c.must("EndTxn", c.retry(func() int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "tx", c.pid, c.epoch, commit
		return rawRequest(c.t, c.addr, req).(*kmsg.EndTxnResponse).ErrorCode
	}))
}

// fetch answers OffsetFetch v7 for tt/0 and tt/1: the offset, or -2 for
// UNSTABLE_OFFSET_COMMIT; it waits out a loading coordinator.
func (c *offsetsTxnClient) fetch(stable bool) [2]int64 {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group, req.RequireStable = 7, c.groupID(), stable
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "tt", []int32{0, 1}
		req.Topics = append(req.Topics, rt)
		resp := rawRequest(c.t, c.groupAddr(), req).(*kmsg.OffsetFetchResponse)
		if resp.ErrorCode != 0 {
			if time.Now().After(deadline) {
				c.t.Fatalf("OffsetFetch: %v", kerr.ErrorForCode(resp.ErrorCode))
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
				c.t.Fatalf("partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		return out
	}
}

// await fetches with require_stable until want (the markers are written
// after EndTxn answers).
func (c *offsetsTxnClient) await(want [2]int64, what string) {
	c.t.Helper()
	var got [2]int64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = c.fetch(true); got == want {
			return
		}
	}
	c.t.Fatalf("%s: %v, want %v", what, got, want)
}

func (c *offsetsTxnClient) want(got, want [2]int64, what string) {
	c.t.Helper()
	if got != want {
		c.t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// TestTxnOffsetCommit: a transaction's offsets through a real broker are
// written to __consumer_offsets and stay pending (OffsetFetch
// require_stable answers UNSTABLE_OFFSET_COMMIT, a plain fetch the last
// committed offset) until EndTxn's COMMIT marker reaches the partition
// (WriteTxnMarkers, which tells the group coordinator); two commits of one
// transaction are two batches of the producer. A transaction open across
// a restart is pending again after the load, and its commit after the
// restart completes it. An epoch older than the partition has seen is
// INVALID_PRODUCER_EPOCH.
func TestTxnOffsetCommit(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, offsetsTxnProps)
	cl := newClient(t, b)
	createTopic(t, cl, "tt", 2, nil)
	coordinatorReady(t, cl, "tg")
	c := &offsetsTxnClient{t: t, addr: b.Addr().String()}
	c.init()

	c.addOffsets()
	c.mustCommit(map[int32]int64{0: 10})
	c.mustCommit(map[int32]int64{0: 11, 1: 20})
	c.want(c.fetch(true), [2]int64{-2, -2}, "pending, require_stable")
	c.want(c.fetch(false), [2]int64{-1, -1}, "pending")
	c.end(true)
	c.await([2]int64{11, 20}, "committed")

	c.addOffsets()
	c.mustCommit(map[int32]int64{0: 30})
	b.Close()
	b = startBroker(t, dir, offsetsTxnProps)
	c.addr = b.Addr().String()
	c.want(c.fetch(true), [2]int64{-2, 20}, "after restart, require_stable")
	c.want(c.fetch(false), [2]int64{11, 20}, "after restart")
	c.end(true)
	c.await([2]int64{30, 20}, "committed after restart")

	old := c.epoch
	c.init() // a new epoch, as a producer restarting with the same id
	c.addOffsets()
	c.mustCommit(map[int32]int64{1: 40})
	if code := c.commit(old, map[int32]int64{1: 41})[1]; code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("commit with the older epoch: %v", kerr.ErrorForCode(code))
	}
	c.end(false)
	c.await([2]int64{30, 20}, "aborted")
}

// TestGroupTransactSession: franz-go's consume-transform-produce session
// (a group member committing its offsets in its transactions, KIP-447:
// TxnOffsetCommit with the member and generation) copies a topic through
// one broker with every third transaction aborted: a read_committed
// reader of the output sees each input record exactly once.
func TestGroupTransactSession(t *testing.T) {
	b := startBroker(t, t.TempDir(), offsetsTxnProps)
	cl := newClient(t, b)
	createTopic(t, cl, "in", 2, nil)
	createTopic(t, cl, "out", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const n = 60
	for i := range n {
		r := &kgo.Record{Topic: "in", Partition: int32(i % 2), Value: []byte(strconv.Itoa(i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(b.Addr().String()), kgo.TransactionalID("etl"),
		kgo.ConsumerGroup("etl-g"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.FetchMaxBytes(200), kgo.MaxConcurrentFetches(1), kgo.WithLogger(kgo.BasicLogger(tWriter{t}, kgo.LogLevelWarn, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	copied, rounds := 0, 0
	for copied < n {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("copied %d of %d: %v", copied, n, ctx.Err())
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
		for _, r := range recs {
			sess.Produce(ctx, &kgo.Record{Topic: "out", Value: r.Value}, nil)
		}
		rounds++
		try := kgo.TryCommit
		if rounds%3 == 0 {
			try = kgo.TryAbort
		}
		committed, err := sess.End(ctx, try)
		if err != nil {
			t.Fatalf("End: %v", err)
		}
		if committed {
			copied += len(recs)
		}
	}

	rd := newClient(t, b, kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen, total := map[string]int{}, 0
	for total < n {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d: %v", total, n, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; total++ })
	}
	if total != n {
		t.Errorf("read %d records, want %d", total, n)
	}
	for i := range n {
		if c := seen[strconv.Itoa(i)]; c != 1 {
			t.Errorf("record %d read %d times", i, c)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct records, want %d", len(seen), n)
	}
}

// findCoordinator asks addr for the coordinator of key (type 0 group, 1
// transaction) until it names one.
func findCoordinator(t *testing.T, addr string, typ int8, key string) int32 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, typ, []string{key}
		r := rawRequest(t, addr, req).(*kmsg.FindCoordinatorResponse)
		if len(r.Coordinators) == 1 && r.Coordinators[0].ErrorCode == 0 {
			return r.Coordinators[0].NodeID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coordinator for %q: %+v", key, r.Coordinators)
		}
	}
}

// TestTxnOffsetsCoordinatorFailover: a transaction's offsets are pending
// on the group coordinator when its broker crashes; the new leader of the
// __consumer_offsets partition loads them pending (require_stable:
// UNSTABLE_OFFSET_COMMIT), and the transaction's COMMIT, written to it by
// the transaction coordinator (another broker), makes them committed.
func TestTxnOffsetsCoordinatorFailover(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"transaction.state.log.num.partitions": "1",
		"offsets.topic.num.partitions": "4"})
	byID := map[int32]*Broker{}
	for _, b := range brokers {
		byID[b.NodeID()] = b
	}
	cl := newClient(t, brokers[0])
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 3, nil, "tt"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	seed := brokers[0].Addr().String()
	txnCoord := findCoordinator(t, seed, 1, "tx")
	// A group whose coordinator is not the transaction coordinator.
	group, groupCoord := "", txnCoord
	for i := 0; groupCoord == txnCoord; i++ {
		group = "tg" + strconv.Itoa(i)
		groupCoord = findCoordinator(t, seed, 0, group)
	}
	c := &offsetsTxnClient{t: t, addr: byID[txnCoord].Addr().String(), gaddr: byID[groupCoord].Addr().String(), group: group}
	c.init()
	c.addOffsets()
	c.mustCommit(map[int32]int64{0: 7})
	c.want(c.fetch(true), [2]int64{-2, -1}, "pending")

	crash(t, byID[groupCoord])
	var live *Broker
	for _, b := range brokers {
		if b.NodeID() != groupCoord && b.NodeID() != txnCoord {
			live = b
		}
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if id := findCoordinator(t, live.Addr().String(), 0, group); id != groupCoord {
			c.gaddr = byID[id].Addr().String()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the group coordinator did not move")
		}
	}
	c.want(c.fetch(true), [2]int64{-2, -1}, "pending after the failover")
	c.end(true)
	c.await([2]int64{7, -1}, "committed after the failover")
}

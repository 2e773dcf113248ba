package e2e

// Replication with real processes: acks=all records survive repeated
// SIGKILLs of the leader, replicas hold identical bytes below the high
// watermark, a stalled follower leaves the ISR and comes back, and an old
// leader's uncommitted suffix is truncated when it returns as a follower.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// partitionView is one partition as Metadata shows it.
type partitionView struct {
	leader int32
	epoch  int32 // leader epoch
	isr    []int32
}

// topicPartitions returns the partitions of topic as Metadata from brokers
// addrs shows them.
func topicPartitions(ctx context.Context, addrs []string, topic string) (kadm.PartitionDetails, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	tds, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	td, ok := tds[topic]
	if !ok || td.Err != nil {
		return nil, fmt.Errorf("topic %s: %v", topic, td.Err)
	}
	return td.Partitions, nil
}

// describe returns the partitions of topic as broker addrs report them.
func describe(ctx context.Context, addrs []string, topic string) (map[int32]partitionView, error) {
	parts, err := topicPartitions(ctx, addrs, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]partitionView{}
	for id, p := range parts {
		isr := slices.Clone(p.ISR)
		slices.Sort(isr)
		out[id] = partitionView{leader: p.Leader, epoch: p.LeaderEpoch, isr: isr}
	}
	return out, nil
}

// waitPartitions polls Metadata until cond holds for the topic's partitions.
func (c *cluster) waitPartitions(addrs []string, topic, what string, cond func(map[int32]partitionView) bool) map[int32]partitionView {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var last map[int32]partitionView
	var lastErr error
	for {
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		v, err := describe(rctx, addrs, topic)
		rcancel()
		if err == nil && cond(v) {
			return v
		}
		last, lastErr = v, err
		if ctx.Err() != nil {
			c.t.Fatalf("%s: never happened (last %v, %v)", what, last, lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fullISR: every partition has a leader and all n replicas in sync.
func fullISR(n int) func(map[int32]partitionView) bool {
	return func(v map[int32]partitionView) bool {
		for _, p := range v {
			if p.leader < 0 || len(p.isr) != n {
				return false
			}
		}
		return len(v) > 0
	}
}

// ackLog collects the acknowledged records of a producer.
type ackLog struct {
	mu   sync.Mutex
	acks []acked
	errs map[string]int
}

func (a *ackLog) add(r *kgo.Record, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if a.errs == nil {
			a.errs = map[string]int{}
		}
		a.errs[err.Error()]++
		return
	}
	a.acks = append(a.acks, acked{r.Partition, r.Offset, string(r.Value)})
}

func (a *ackLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acks)
}

// produceUntil produces numbered records to topic with acks=all until stop
// is closed, one request in flight per broker so that retries keep order.
func produceUntil(t *testing.T, addrs []string, topic string, stop <-chan struct{}, log *ackLog) func() {
	return produceWith(t, addrs, topic, stop, log, kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxProduceRequestsInflightPerBroker(1))
}

// produceWith produces numbered records to topic until stop is closed, on a
// client with opts (franz-go's defaults otherwise).
func produceWith(t *testing.T, addrs []string, topic string, stop <-chan struct{}, log *ackLog, opts ...kgo.Opt) func() {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(2 * time.Millisecond), kgo.RecordDeliveryTimeout(2 * time.Minute),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("%s-%09d", topic, i)
			cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(v)}, log.add)
			if ctx.Err() != nil {
				return
			}
			if i%4 == 0 {
				time.Sleep(time.Millisecond) // a steady stream, not a flood that only measures queueing
			}
		}
	}()
	return func() {
		defer cancel()
		wg.Wait()
		if err := cl.Flush(ctx); err != nil {
			t.Errorf("flush: %v", err)
		}
		cl.Close()
	}
}

// consumeAll reads every partition of topic from the start to its high
// watermark and returns the records by partition and offset.
func consumeAll(t *testing.T, addrs []string, topic string) map[int32]map[int64]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topic)
	adm.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[int32]map[int64]string{}
	done := func() bool {
		for p, end := range want {
			if int64(len(got[p])) < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %v of %v", lens(got), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if got[r.Partition] == nil {
				got[r.Partition] = map[int64]string{}
			}
			got[r.Partition][r.Offset] = string(r.Value)
		})
	}
	return got
}

func lens(m map[int32]map[int64]string) map[int32]int {
	out := map[int32]int{}
	for p, r := range m {
		out[p] = len(r)
	}
	return out
}

// checkAcked fails for an acknowledged record missing from its offset, and
// for acknowledgements (in the order acks lists them, the order of
// franz-go's per-partition callbacks) whose offsets do not increase.
func checkAcked(t *testing.T, acks []acked, got map[int32]map[int64]string) {
	t.Helper()
	lost := 0
	byPart := map[int32][]acked{}
	for _, a := range acks {
		if got[a.partition][a.offset] != a.value {
			if lost < 5 {
				t.Errorf("acknowledged %q at %d/%d, found %q", a.value, a.partition, a.offset, got[a.partition][a.offset])
			}
			lost++
		}
		byPart[a.partition] = append(byPart[a.partition], a)
	}
	for p, as := range byPart { // acknowledgements in the order the client got them
		for i := 1; i < len(as); i++ {
			if as[i].offset <= as[i-1].offset {
				t.Errorf("partition %d: %q acknowledged at %d after %q at %d", p, as[i].value, as[i].offset, as[i-1].value, as[i-1].offset)
				break
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged records lost", lost, len(acks))
	}
}

// logBytes returns the batches of a partition directory below hw, as the
// concatenation of its segment files cut at the first batch reaching hw.
func logBytes(t *testing.T, dir string, hw int64) []byte {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(segs) // zero-padded base offsets sort numerically
	var all []byte
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	pos := 0
	for pos+12 <= len(all) {
		base := int64(binary.BigEndian.Uint64(all[pos:]))
		n := int(binary.BigEndian.Uint32(all[pos+8:])) + 12
		if pos+n > len(all) || pos+27 > len(all) {
			break
		}
		last := base + int64(binary.BigEndian.Uint32(all[pos+23:]))
		if last >= hw {
			break
		}
		pos += n
	}
	return all[:pos]
}

// compareReplicas checks that every broker's copy of each partition holds
// the same bytes below the high watermark.
func (c *cluster) compareReplicas(topic string, hws map[int32]int64) {
	c.t.Helper()
	for p, hw := range hws {
		var ref []byte
		var refID int32 = -1
		for id, dir := range c.dirs {
			b := logBytes(c.t, filepath.Join(dir, fmt.Sprintf("%s-%d", topic, p)), hw)
			if refID < 0 {
				ref, refID = b, id
				continue
			}
			if !bytes.Equal(b, ref) {
				c.t.Fatalf("partition %d below hw %d: broker %d has %d bytes, broker %d has %d bytes, not identical",
					p, hw, refID, len(ref), id, len(b))
			}
		}
		if hw > 0 && len(ref) == 0 {
			c.t.Fatalf("partition %d: no data below hw %d", p, hw)
		}
	}
}

func (c *cluster) endOffsets(addrs []string, topic string) map[int32]int64 {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// stopAll stops every broker with SIGTERM (clean shutdown flushes logs).
func (c *cluster) stopAll() {
	for _, p := range c.procs {
		p.stop()
	}
}

// TestAcksAllSurvivesLeaderKills produces with acks=all to an RF=3 topic
// while SIGKILLing the leader of partition 0 ten times, restarting it each
// time once a new leader serves; every acknowledged record must be at its
// offset afterwards and all three replicas identical below the HW.
func TestAcksAllSurvivesLeaderKills(t *testing.T) {
	c, all := startReadyCluster(t)
	const topic = "repl"
	c.createTopic(all, topic, 3)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))

	log := &ackLog{}
	stop := make(chan struct{})
	finish := produceUntil(t, all, topic, stop, log)
	for round := range 10 {
		before := log.count()
		v := c.waitPartitions(all, topic, "full ISR before a kill", fullISR(3))
		victim := v[0].leader
		// Some acknowledged traffic on the current leaders first.
		for deadline := time.Now().Add(30 * time.Second); log.count() < before+500 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		c.procs[victim].kill()
		others := c.addrs(victim)
		c.waitPartitions(others, topic, fmt.Sprintf("round %d: a new leader for partition 0", round), func(v map[int32]partitionView) bool {
			return v[0].leader >= 0 && v[0].leader != victim
		})
		c.start(victim)
		t.Logf("round %d: killed broker %d; %d records acknowledged so far", round, victim, log.count())
	}
	c.waitPartitions(all, topic, "full ISR at the end", fullISR(3))
	close(stop)
	finish()
	log.mu.Lock()
	acks, errs := slices.Clone(log.acks), log.errs
	log.mu.Unlock()
	if len(acks) < 5000 {
		t.Fatalf("only %d records acknowledged (errors %v)", len(acks), errs)
	}
	got := consumeAll(t, all, topic)
	checkAcked(t, acks, got)

	// Replicas converge: wait for the followers to fetch up to the leaders'
	// end, then stop everything and compare the files below the HW.
	hws := c.endOffsets(all, topic)
	time.Sleep(2 * time.Second) // followers fetch the last HW (replica.fetch.wait.max.ms is 500)
	c.waitPartitions(all, topic, "full ISR before comparing", fullISR(3))
	c.stopAll()
	c.compareReplicas(topic, hws)
	t.Logf("%d acknowledged records, none lost; producer errors (retried): %v", len(acks), errs)
}

// TestFollowerLeavesAndRejoinsISR stalls a follower (SIGSTOP) for longer
// than replica.lag.time.max.ms but shorter than its store session: the
// leader shrinks the ISR through the controller, `samsa topics
// --under-replicated-partitions` shows the partition, acks=all with
// min.insync.replicas=3 gets NOT_ENOUGH_REPLICAS; after SIGCONT the follower
// catches up and the ISR grows back.
func TestFollowerLeavesAndRejoinsISR(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := &cluster{t: t, connect: st.endpoint + "/samsa-test", procs: map[int32]*proc{}, ports: map[int32]int{}, dirs: map[int32]string{},
		extra: []string{"replica.lag.time.max.ms=2000", "replica.fetch.wait.max.ms=200"}}
	mports := map[int32]int{}
	for id := int32(0); id < 3; id++ {
		c.ports[id], c.dirs[id], mports[id] = freePort(t), t.TempDir(), freePort(t)
		c.procs[id] = startServer(t, c.dirs[id], c.ports[id], append([]string{
			fmt.Sprintf("broker.id=%d", id), "metadata.store.connect=" + c.connect,
			"metadata.store.session.timeout.ms=30000", fmt.Sprintf("metrics.listener=127.0.0.1:%d", mports[id])}, c.extra...)...)
	}
	// gauges checks the series of broker id's metrics.
	gauges := func(id int32, what string, want map[string]float64) {
		t.Helper()
		value := metricsAt(t, mports[id])
		for series, w := range want {
			if v, ok := value(series); !ok || v != w {
				t.Errorf("%s: broker %d's %s %v (served: %v), want %v", what, id, series, v, ok, w)
			}
		}
	}
	all := c.addrs(-1)
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	const topic = "isr"
	cl, err := kgo.NewClient(kgo.SeedBrokers(all...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("3")}, topic); err != nil {
		t.Fatal(err)
	}
	v := c.waitPartitions(all, topic, "full ISR", fullISR(3))
	leader := v[0].leader
	var follower int32 = -1
	for id := range c.procs {
		if id != leader && id != c.controllerID(all) {
			follower = id
		}
	}
	produce := func(acks kgo.Acks) error {
		pc, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(follower)...), kgo.DisableIdempotentWrite(),
			kgo.RequiredAcks(acks), kgo.DefaultProduceTopic(topic), kgo.RecordRetries(2),
			kgo.RecordDeliveryTimeout(20*time.Second))
		if err != nil {
			return err
		}
		defer pc.Close()
		return pc.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	}
	if err := produce(kgo.AllISRAcks()); err != nil {
		t.Fatalf("acks=all with the full ISR: %v", err)
	}

	c.procs[follower].cmd.Process.Signal(syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			c.procs[follower].cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	// acks=1 traffic moves the leader's end away from the stalled follower.
	if err := produce(kgo.LeaderAck()); err != nil {
		t.Fatalf("acks=1 with a stalled follower: %v", err)
	}
	others := c.addrs(follower)
	c.waitPartitions(others, topic, "the stalled follower out of the ISR", func(v map[int32]partitionView) bool {
		return len(v[0].isr) == 2 && !slices.Contains(v[0].isr, follower)
	})
	out, code := samsaTopics(t, "--bootstrap-server", strings.Join(others, ","), "--describe", "--under-replicated-partitions")
	if code != 0 || !strings.Contains(out, "Topic: "+topic+"\tPartition: 0") {
		t.Fatalf("under-replicated partitions (exit %d) do not show %s-0:\n%s", code, topic, out)
	}
	// The code itself, from the leader, without a client's retries (which
	// may wait on the stalled broker's connection).
	var pcode int16 = -1
	for deadline := time.Now().Add(20 * time.Second); pcode != kerr.NotEnoughReplicas.Code && time.Now().Before(deadline); {
		pcode = rawProduceAcksAll(t, c.procs[leader].addr, topic)
		if pcode != kerr.NotEnoughReplicas.Code {
			time.Sleep(100 * time.Millisecond) // the leader may not have the controller's answer yet
		}
	}
	if pcode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all with ISR 2 < min.insync.replicas 3: %v, want NOT_ENOUGH_REPLICAS", kerr.ErrorForCode(pcode))
	}
	// The leader has adopted the shrink (it refused acks=all for it): its
	// gauges say so, as the controller's say nothing is offline.
	gauges(leader, "follower out", map[string]float64{
		"samsa_replica_manager_leaders": 1, "samsa_replica_manager_under_replicated_partitions": 1,
		"samsa_replica_manager_under_min_isr_partitions": 1,
	})
	// The ISR counters count the leader's own changes (an ISR the
	// controller cuts, as for a broker whose session ended, is not one):
	// at least the stalled follower's shrink so far, and after it comes
	// back at least one expansion more.
	isrChanges := func() (shrinks, expands float64) {
		value := metricsAt(t, mports[leader])
		shrinks, _ = value("samsa_replica_manager_isr_shrinks_total")
		expands, _ = value("samsa_replica_manager_isr_expands_total")
		return shrinks, expands
	}
	shrinksOut, expandsOut := isrChanges()
	if shrinksOut < 1 {
		t.Errorf("follower out: the leader counts %v ISR shrinks", shrinksOut)
	}
	ctl := c.controllerID(others)
	gauges(ctl, "follower out", map[string]float64{
		"samsa_controller_active": 1, "samsa_controller_offline_partitions": 0, "samsa_controller_partitions": 1,
	})

	c.procs[follower].cmd.Process.Signal(syscall.SIGCONT)
	stopped = false
	c.waitPartitions(all, topic, "the follower back in the ISR", fullISR(3))
	if err := produce(kgo.AllISRAcks()); err != nil {
		t.Fatalf("acks=all after the ISR grew back: %v", err)
	}
	gauges(leader, "follower back", map[string]float64{
		"samsa_replica_manager_under_replicated_partitions": 0, "samsa_replica_manager_under_min_isr_partitions": 0,
		"samsa_replica_manager_at_min_isr_partitions": 1,
	})
	if _, expands := isrChanges(); expands < expandsOut+1 {
		t.Errorf("follower back: the leader counts %v ISR expansions, %v before", expands, expandsOut)
	}
	// Caught up: the follower's fetcher lags by nothing.
	gauges(follower, "follower back", map[string]float64{"samsa_replica_fetcher_max_lag": 0})
	for id := range c.procs {
		if id != ctl {
			gauges(id, "follower back", map[string]float64{"samsa_controller_active": 0})
		}
		// What the leader sent its followers, they appended.
		value, series := metricsAt(t, mports[id]), "samsa_replication_bytes_in_total"
		if id == leader {
			series = "samsa_replication_bytes_out_total"
		}
		if v, _ := value(series); v < 61 {
			t.Errorf("broker %d's %s %v, want at least a batch", id, series, v)
		}
	}
	out, _ = samsaTopics(t, "--bootstrap-server", strings.Join(all, ","), "--describe", "--under-replicated-partitions")
	if strings.Contains(out, "Topic: "+topic) {
		t.Fatalf("still under-replicated after the follower caught up:\n%s", out)
	}
}

// rawProduceAcksAll sends one acks=-1 Produce of one record to partition 0
// of topic at addr and returns the partition's error code (-1 when the
// request itself failed).
func rawProduceAcksAll(t *testing.T, addr, topic string) int16 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = recordtest.Values(time.Now().UnixMilli(), "x")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return -1
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return -1
	}
	return pr.Topics[0].Partitions[0].ErrorCode
}

func (c *cluster) controllerID(addrs []string) int32 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, ctl, err := view(ctx, addrs[0])
	if err != nil {
		return -1
	}
	return ctl
}

// TestDivergentSuffixIsTruncated builds the case leader epochs exist for:
// both followers stall (SIGSTOP, sessions kept) while the leader takes
// acks=1 records that never reach them; the leader is SIGKILLed and the
// followers resumed, so one of them becomes leader without those records
// and takes new ones. When the old leader returns as a follower its
// uncommitted suffix must be gone and its log identical to the new
// leader's.
func TestDivergentSuffixIsTruncated(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := &cluster{t: t, connect: st.endpoint + "/samsa-test", procs: map[int32]*proc{}, ports: map[int32]int{}, dirs: map[int32]string{}}
	for id := int32(0); id < 3; id++ {
		c.ports[id], c.dirs[id] = freePort(t), t.TempDir()
	}
	c.extra = nil
	startOne := func(id int32) {
		c.procs[id] = startServer(t, c.dirs[id], c.ports[id], fmt.Sprintf("broker.id=%d", id),
			"metadata.store.connect="+c.connect, "metadata.store.session.timeout.ms=6000")
	}
	for id := int32(0); id < 3; id++ {
		startOne(id)
	}
	all := c.addrs(-1)
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	const topic = "diverge"
	cl, err := kgo.NewClient(kgo.SeedBrokers(all...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	v := c.waitPartitions(all, topic, "full ISR", fullISR(3))
	oldLeader := v[0].leader // may be the controller too: then a controller failover happens on the way
	send := func(addrs []string, acks kgo.Acks, prefix string, n int) []acked {
		pc, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(acks),
			kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(60*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		var out []acked
		for i := range n {
			r, err := pc.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%05d", prefix, i))}).First()
			if err != nil {
				t.Fatalf("%s %d: %v", prefix, i, err)
			}
			out = append(out, acked{r.Partition, r.Offset, string(r.Value)})
		}
		return out
	}
	committed := send(all, kgo.AllISRAcks(), "committed", 20)

	var followers []int32
	for id := range c.procs {
		if id != oldLeader {
			followers = append(followers, id)
		}
	}
	for _, f := range followers {
		c.procs[f].cmd.Process.Signal(syscall.SIGSTOP)
	}
	// The stalled followers may still hold a fetch response sent before
	// they stopped: the primer record may reach them through it, nothing
	// after it can.
	send([]string{c.procs[oldLeader].addr}, kgo.LeaderAck(), "primer", 1)
	time.Sleep(200 * time.Millisecond)
	uncommitted := send([]string{c.procs[oldLeader].addr}, kgo.LeaderAck(), "uncommitted", 20)
	c.procs[oldLeader].kill()
	for _, f := range followers {
		c.procs[f].cmd.Process.Signal(syscall.SIGCONT)
	}
	others := c.addrs(oldLeader)
	c.waitPartitions(others, topic, "a new leader", func(v map[int32]partitionView) bool {
		return v[0].leader >= 0 && v[0].leader != oldLeader
	})
	after := send(others, kgo.AllISRAcks(), "after", 20)
	startOne(oldLeader)
	c.waitPartitions(all, topic, "the old leader back in the ISR", fullISR(3))

	got := consumeAll(t, all, topic)
	checkAcked(t, append(committed, after...), got)
	for _, u := range uncommitted {
		for off, val := range got[0] {
			if val == u.value {
				t.Fatalf("uncommitted %q survived at offset %d", u.value, off)
			}
		}
	}
	hws := c.endOffsets(all, topic)
	time.Sleep(time.Second)
	c.stopAll()
	c.compareReplicas(topic, hws)
}

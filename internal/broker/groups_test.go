package broker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/group"
)

// groupProps make rebalances quick in tests (the delay is Kafka's 3 s by
// default).
var groupProps = map[string]string{"group.initial.rebalance.delay.ms": "200"}

// produceValues writes n records "v<i>" (round-robin over the partitions
// when cl has that partitioner).
func produceValues(t *testing.T, cl *kgo.Client, topic string, from, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte("v" + strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitGroup waits until the group is Stable with n members, each assigned.
func waitGroup(t *testing.T, adm *kadm.Client, groupID string, n int) kadm.DescribedGroup {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		dg, err := adm.DescribeGroups(ctx, groupID)
		cancel()
		if err == nil {
			g := dg[groupID]
			if g.Err == nil && g.State == "Stable" && len(g.Members) == n {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s not Stable with %d members: %+v %v", groupID, n, dg, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// consumed counts every record seen, across members.
type consumed struct {
	mu   sync.Mutex
	seen map[string]int
	n    int
	all  chan struct{}
	want int
}

func newConsumed(want int) *consumed {
	return &consumed{seen: map[string]int{}, all: make(chan struct{}), want: want}
}

func (c *consumed) add(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[v]++
	if c.n++; c.n == c.want {
		close(c.all)
	}
}

// member polls until ctx ends, committing what it processed after every
// poll (synchronously, so a commit acknowledged is a commit made).
func member(ctx context.Context, t *testing.T, cl *kgo.Client, c *consumed, wg *sync.WaitGroup) {
	defer wg.Done()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { c.add(string(r.Value)) })
		if err := cl.CommitUncommittedOffsets(context.Background()); err != nil && ctx.Err() == nil {
			t.Errorf("commit: %v", err)
		}
	}
}

// Three franz-go group members with each balancer split a 6-partition
// topic: every record is consumed exactly once, the commits reach the log
// end, and they survive a restart of the (only) broker.
func TestGroupConsumersFranz(t *testing.T) {
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{
		{"range", kgo.RangeBalancer()},
		{"sticky", kgo.StickyBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(bal.name, func(t *testing.T) { testGroupConsumers(t, bal.b) })
	}
}

func testGroupConsumers(t *testing.T, bal kgo.GroupBalancer) {
	dir := t.TempDir()
	b := startBroker(t, dir, groupProps)
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	createTopic(t, cl, "gt", 6, nil)
	const n = 600
	got := newConsumed(n)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var members []*kgo.Client
	for range 3 {
		m := newClient(t, b, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("gt"), kgo.Balancers(bal),
			kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
		members = append(members, m)
		wg.Add(1)
		go member(ctx, t, m, got, &wg)
	}
	adm := kadm.NewClient(cl)
	g := waitGroup(t, adm, "g", 3)
	if g.Protocol != bal.ProtocolName() {
		t.Fatalf("protocol %q, want %q", g.Protocol, bal.ProtocolName())
	}
	produceValues(t, cl, "gt", 0, n)
	select {
	case <-got.all:
	case <-time.After(60 * time.Second):
		t.Fatalf("consumed %d of %d", got.n, n)
	}
	cancel()
	wg.Wait()
	for i := range n {
		if c := got.seen["v"+strconv.Itoa(i)]; c != 1 {
			t.Fatalf("v%d consumed %d times", i, c)
		}
	}
	for _, m := range members {
		m.Close() // LeaveGroup
	}
	want := committedTotal(t, adm, "g")
	if want != n {
		t.Fatalf("committed offsets sum to %d, want %d", want, n)
	}
	b.Close()
	b = startBroker(t, dir, groupProps)
	adm = kadm.NewClient(newClient(t, b))
	if got := committedTotal(t, adm, "g"); got != n {
		t.Fatalf("after restart committed offsets sum to %d, want %d", got, n)
	}
}

// committedTotal sums the group's committed offsets (retrying while the
// coordinator loads).
func committedTotal(t *testing.T, adm *kadm.Client, groupID string) int64 {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		os, err := adm.FetchOffsets(ctx, groupID)
		cancel()
		if err == nil {
			var sum int64
			os.Each(func(o kadm.OffsetResponse) { sum += o.At })
			return sum
		}
		if time.Now().After(deadline) {
			t.Fatalf("fetch offsets: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A static member (group.instance.id) that restarts within its session
// timeout gets its partitions back without a rebalance: the generation
// stays.
func TestStaticMemberRestartNoRebalance(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps)
	cl := newClient(t, b)
	createTopic(t, cl, "st", 3, nil)
	opts := func(inst string) []kgo.Opt {
		return []kgo.Opt{kgo.ConsumerGroup("sg"), kgo.ConsumeTopics("st"), kgo.InstanceID(inst),
			kgo.SessionTimeout(30 * time.Second), kgo.FetchMaxWait(200 * time.Millisecond)}
	}
	poll := func(ctx context.Context, m *kgo.Client) {
		for ctx.Err() == nil {
			m.PollFetches(ctx)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m1 := newClient(t, b, opts("i1")...)
	m2 := newClient(t, b, opts("i2")...)
	go poll(ctx, m1)
	go poll(ctx, m2)
	adm := kadm.NewClient(cl)
	waitGroup(t, adm, "sg", 2)
	before := describeLocal(t, b, "sg")
	m2.Close() // a static member leaves no LeaveGroup behind
	m2 = newClient(t, b, opts("i2")...)
	go poll(ctx, m2)
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := describeLocal(t, b, "sg")
		if d.State == group.Stable && memberIDs(d) != memberIDs(before) {
			if d.Generation != before.Generation {
				t.Fatalf("static restart rebalanced: generation %d -> %d", before.Generation, d.Generation)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted static member did not rejoin: %+v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describeLocal(t *testing.T, b *Broker, groupID string) group.Description {
	t.Helper()
	d, err := b.groups.Describe(groupID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func memberIDs(d group.Description) string {
	s := ""
	for _, m := range d.Members {
		s += m.MemberID + ","
	}
	return s
}

var _ = fmt.Sprint

// Deleting a topic deletes the offsets committed for it (Kafka's
// onPartitionsDeleted); the group's other offsets stay.
func TestDeletedTopicOffsetsGo(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps)
	cl := newClient(t, b)
	createTopic(t, cl, "dt", 2, nil)
	createTopic(t, cl, "keep", 1, nil)
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	coordinatorReady(t, cl, "dg")
	os := kadm.Offsets{}
	os.AddOffset("dt", 0, 5, -1)
	os.AddOffset("dt", 1, 6, -1)
	os.AddOffset("keep", 0, 7, -1)
	if res, err := adm.CommitOffsets(ctx, "dg", os); err != nil || res.Error() != nil {
		t.Fatalf("commit: %v %v", err, res.Error())
	}
	if _, err := adm.DeleteTopic(ctx, "dt"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, err := adm.FetchOffsets(ctx, "dg")
		_, dt := got.Lookup("dt", 0)
		k, keep := got.Lookup("keep", 0)
		if err == nil && !dt && keep && k.At == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("offsets after deleting dt: %+v %v", got, err)
		}
	}
}

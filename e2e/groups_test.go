package e2e

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitLog keeps, per partition, the highest offset a commit was
// acknowledged for, and counts what the members consumed.
type commitLog struct {
	mu    sync.Mutex
	acked map[int32]int64
	seen  map[string]bool
}

func (c *commitLog) record(resp *kmsg.OffsetCommitResponse, req *kmsg.OffsetCommitRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, t := range resp.Topics {
		for j, p := range t.Partitions {
			if p.ErrorCode == 0 {
				o := req.Topics[i].Partitions[j].Offset
				c.acked[p.Partition] = max(c.acked[p.Partition], o)
			}
		}
	}
}

func (c *commitLog) consumed(v string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[v] = true
	return len(c.seen)
}

func (c *commitLog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// groupMember polls a few records at a time and commits them
// synchronously, recording every acknowledged commit.
func groupMember(ctx context.Context, t *testing.T, addrs []string, log *commitLog, wg *sync.WaitGroup) {
	defer wg.Done()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumerGroup("eg"), kgo.ConsumeTopics("eg-topic"),
		kgo.DisableAutoCommit(), kgo.SessionTimeout(6*time.Second), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollRecords(ctx, 20)
		fs.EachRecord(func(r *kgo.Record) { log.consumed(string(r.Value)) })
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cl.CommitOffsetsSync(cctx, cl.UncommittedOffsets(), func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err == nil {
				log.record(resp, req)
			}
		})
		cancel()
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGroupCoordinatorKill9: a group of 3 consumes with synchronous commits
// on 3 `samsa server` processes; the broker coordinating the group is
// SIGKILLed. The group re-forms on another coordinator, consumes
// everything, and no acknowledged commit is lost or goes backwards.
func TestGroupCoordinatorKill9(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, "group.initial.rebalance.delay.ms=200", "offsets.topic.num.partitions=10")
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if res, err := adm.CreateTopic(ctx, 6, 3, nil, "eg-topic"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	const n = 3000
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "eg-topic", Value: []byte(strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	log := &commitLog{acked: map[int32]int64{}, seen: map[string]bool{}}
	mctx, mcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go groupMember(mctx, t, c.addrs(-1), log, &wg)
	}
	for log.count() < n/3 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	coord := coordinatorOf(ctx, t, adm, "eg")
	killed := time.Now()
	c.procs[coord].kill()
	t.Logf("coordinator %d SIGKILLed after %d of %d records", coord, log.count(), n)

	survivors := kadm.NewClient(mustClient(t, c.addrs(coord)))
	for {
		if nc := coordinatorOf(ctx, t, survivors, "eg"); nc != coord {
			dg, err := survivors.DescribeGroups(ctx, "eg")
			if err == nil && dg["eg"].State == "Stable" && len(dg["eg"].Members) == 3 {
				t.Logf("group Stable with 3 members on coordinator %d %v after the kill", nc, time.Since(killed).Round(time.Millisecond))
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the group did not re-form on a new coordinator")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for log.count() < n && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	mcancel()
	wg.Wait()
	if log.count() != n {
		t.Fatalf("consumed %d of %d distinct records", log.count(), n)
	}
	offs, err := survivors.FetchOffsets(ctx, "eg")
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for p, a := range log.acked {
		o, ok := offs.Lookup("eg-topic", p)
		if !ok || o.At < a {
			t.Errorf("partition %d: committed %d after failover, but %d was acknowledged", p, o.At, a)
		}
	}
	if len(log.acked) != 6 {
		t.Errorf("commits acknowledged for %d partitions, want 6", len(log.acked))
	}
}

func mustClient(t *testing.T, addrs []string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// coordinatorOf asks FindCoordinator until it names a broker.
func coordinatorOf(ctx context.Context, t *testing.T, adm *kadm.Client, groupID string) int32 {
	t.Helper()
	for {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		res := adm.FindGroupCoordinators(rctx, groupID)
		cancel()
		if r, ok := res[groupID]; ok && r.Err == nil {
			return r.NodeID
		}
		if ctx.Err() != nil {
			t.Fatalf("no coordinator for %s", groupID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

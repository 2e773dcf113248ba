package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// A JoinGroup is not charged the time it waits for the rebalance (Kafka
// counts the request handler thread's time, not purgatory's): the clock
// moves 10 s while the join of a new group waits out
// group.initial.rebalance.delay.ms, and the client, at 1% of request
// time, is not throttled; charged, those 10 s would throttle it.
func TestJoinGroupWaitNotCharged(t *testing.T) {
	x := newHarness(t)
	p := x.lead(OffsetsTopic, 1, []int32{self}, []int32{self}, 1)
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	x.h.Now = clock
	x.h.Quotas = quota.New(quota.DefaultConfig)
	x.h.Quotas.Set(quota.Entity{ClientID: quota.Default}, map[string]float64{quota.RequestPercentage: 1})
	c := group.NewCoordinator(group.CoordinatorConfig{
		Group: group.Config{MinSessionTimeout: time.Second, MaxSessionTimeout: time.Minute,
			InitialRebalanceDelay: 3 * time.Second, MaxSize: 10},
		Partitions: 1, Retention: time.Hour, CommitTimeout: 10 * time.Second, MetadataMaxBytes: 100,
		Log: offsetsLog{p}, Now: clock, TickInterval: time.Millisecond})
	x.h.Groups = c
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	c.BecomeLeader(0, 1)
	await(t, "coordinator loaded", func() bool { return c.Serves("g") == nil })

	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.ProtocolType = 3, "g", "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10_000, 60_000
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name, proto.Metadata = "range", []byte{0}
	req.Protocols = append(req.Protocols, proto)
	type answer struct {
		resp kmsg.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		client := "c"
		resp, err := x.h.Handle(context.Background(), nil, wire.RequestHeader{Key: req.Key(), Version: req.Version, ClientID: &client}, req)
		answered <- answer{resp, err}
	}()
	// The member is in the group once its join waits (the coordinator
	// marks the wait before it lets go of the group).
	await(t, "the join waiting for the rebalance", func() bool {
		d, err := c.Describe("g")
		return err == nil && d.State == group.PreparingRebalance && len(d.Members) == 1
	})
	mu.Lock()
	now = now.Add(10 * time.Second) // past the initial delay: the next tick completes the join
	mu.Unlock()
	var a answer
	select {
	case a = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the join was never answered")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	resp := a.resp.(*kmsg.JoinGroupResponse)
	if resp.ErrorCode != 0 || resp.ThrottleMillis != 0 {
		t.Fatalf("join: error %d, throttled %d ms; want neither (the 10 s waited are not request time)", resp.ErrorCode, resp.ThrottleMillis)
	}
}

// Waits that overlap (the topics of one CreateTopics) are taken off a
// request's time once: it is busy only while none is under way.
func TestQuotaParkOverlapping(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	q := &quotaReq{start: now}
	step := func() { now = now.Add(time.Second) }
	step() // busy
	first := q.park(clock)
	step()
	second := q.park(clock)
	step()
	first()
	step() // second still waits
	if got := q.busy(now); got != time.Second {
		t.Fatalf("busy %v while a wait is under way, want 1s", got)
	}
	second()
	step() // busy
	if got := q.busy(now); got != 2*time.Second {
		t.Fatalf("busy %v, want 2s", got)
	}
}

package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// Admin traffic during the faults: topics created, written to and deleted,
// and reassignments of the moves topic's partitions, which the writers
// also write to (so a reassignment that lost an acknowledged record shows
// in the history check).
type Admin struct {
	Seeds   []string
	Brokers int
	Moves   string // the topic whose partitions get reassigned
	// MovesPartitions is the moves topic's partition count.
	MovesPartitions int32
	Every           time.Duration
	Seed            int64

	mu      sync.Mutex
	created []string            // churn topics whose creation was attempted
	moves   map[int32][][]int32 // replica sets requested, in order
	acked   map[int32]int       // index in moves of the last accepted request
	errs    map[string]int
	done    chan struct{}
}

const churnPrefix = "chaos-churn-"

// CreateMoves creates the moves topic: RF 2 over the 3 brokers, so a
// reassignment moves data; min.insync.replicas=1 keeps it writable with
// one replica (unclean election stays off, so no acknowledged record may
// be lost).
func CreateMoves(ctx context.Context, adm *kadm.Client, name string, partitions int32) error {
	return createTopic(ctx, adm, name, partitions, 2, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
}

// Run starts the admin traffic; it stops when ctx ends, and Wait returns
// when it has.
func (a *Admin) Run(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(a.Seeds...), kgo.DialTimeout(3*time.Second),
		kgo.RequestTimeoutOverhead(5*time.Second), kgo.RetryTimeout(10*time.Second),
		kgo.RecordDeliveryTimeout(10*time.Second))
	if err != nil {
		return err
	}
	a.moves, a.acked, a.errs, a.done = map[int32][][]int32{}, map[int32]int{}, map[string]int{}, make(chan struct{})
	go func() {
		defer close(a.done)
		defer cl.Close()
		a.loop(ctx, cl, rand.New(rand.NewSource(a.Seed)))
	}()
	return nil
}

// Wait waits for Run's loop to stop.
func (a *Admin) Wait() { <-a.done }

func (a *Admin) loop(ctx context.Context, cl *kgo.Client, rng *rand.Rand) {
	adm := kadm.NewClient(cl)
	tick := time.NewTicker(a.Every)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		name := fmt.Sprintf("%s%d", churnPrefix, i)
		a.mu.Lock()
		a.created = append(a.created, name)
		a.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := adm.CreateTopic(rctx, 3, 2, nil, name)
		a.note("create", firstErr(err, r.Err))
		if err == nil && r.Err == nil {
			recs := make([]*kgo.Record, 5)
			for j := range recs {
				recs[j] = &kgo.Record{Topic: name, Value: []byte(fmt.Sprintf("churn-%d-%d", i, j))}
			}
			a.note("produce to a new topic", cl.ProduceSync(rctx, recs...).FirstErr())
		}
		cancel()
		a.reassign(ctx, adm, rng)
		if i > 2 { // topics live two rounds
			a.delete(ctx, adm, fmt.Sprintf("%s%d", churnPrefix, i-2))
		}
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *Admin) note(what string, err error) {
	if err == nil {
		return
	}
	a.mu.Lock()
	a.errs[what+": "+errKind(err)]++
	a.mu.Unlock()
}

// reassign moves a random partition of the moves topic to a random other
// pair of brokers.
func (a *Admin) reassign(ctx context.Context, adm *kadm.Client, rng *rand.Rand) {
	p := rng.Int31n(a.MovesPartitions)
	first := int32(1 + rng.Intn(a.Brokers))
	second := int32(1 + (int(first)+rng.Intn(a.Brokers-1))%a.Brokers)
	target := []int32{first, second}
	a.mu.Lock()
	a.moves[p] = append(a.moves[p], target)
	idx := len(a.moves[p]) - 1
	a.mu.Unlock()
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(a.Moves, p, target)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := adm.AlterPartitionAssignments(rctx, req)
	a.note("reassign", firstErr(err, resp.Error()))
	if err == nil && resp.Error() == nil {
		a.mu.Lock()
		a.acked[p] = idx
		a.mu.Unlock()
	}
}

func (a *Admin) delete(ctx context.Context, adm *kadm.Client, name string) error {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := adm.DeleteTopic(rctx, name)
	err = firstErr(err, r.Err)
	if isUnknownTopic(err) {
		err = nil
	}
	a.note("delete", err)
	return err
}

func isUnknownTopic(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION")
}

// Finish, once the cluster is healed, deletes every churn topic that may
// still exist.
func (a *Admin) Finish(ctx context.Context, adm *kadm.Client) error {
	a.mu.Lock()
	names := slices.Clone(a.created)
	a.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range names {
		for a.delete(ctx, adm, name) != nil {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("deleting %s: not done within 60 s", name)
			}
			sleep(ctx, time.Second)
		}
	}
	return nil
}

// Errors is the admin clients' error tally.
func (a *Admin) Errors() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.errs))
	for k, v := range a.errs {
		out["admin: "+k] = v
	}
	return out
}

// Check waits (up to bound) until every churn topic is gone from every
// broker's metadata, the store and the brokers' log dirs, and every
// reassignment has finished with the moves topic's partitions on a replica
// set that was asked for no earlier than the last accepted request; then
// it lists what still does not hold.
func (a *Admin) Check(ctx context.Context, cl *kgo.Client, c *Cluster, logDirs map[string]string, bound time.Duration) []string {
	deadline := time.Now().Add(bound)
	for {
		bad := a.check(ctx, cl, c, logDirs)
		if len(bad) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return bad
		}
		sleep(ctx, time.Second)
	}
}

func (a *Admin) check(ctx context.Context, cl *kgo.Client, c *Cluster, logDirs map[string]string) []string {
	var bad []string
	for i := range c.Brokers {
		id := int32(i + 1)
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		resp, err := cl.Broker(int(id)).Request(rctx, kmsg.NewPtrMetadataRequest())
		cancel()
		if err != nil {
			bad = append(bad, fmt.Sprintf("b%d: metadata: %v", id, err))
			continue
		}
		for _, t := range resp.(*kmsg.MetadataResponse).Topics {
			if t.Topic != nil && strings.HasPrefix(*t.Topic, churnPrefix) {
				bad = append(bad, fmt.Sprintf("b%d: deleted topic %s still in metadata", id, *t.Topic))
			}
			if t.Topic != nil && *t.Topic == a.Moves {
				bad = append(bad, a.checkMoves(fmt.Sprintf("b%d", id), t.Partitions)...)
			}
		}
	}
	for name, dir := range logDirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), churnPrefix) {
				bad = append(bad, fmt.Sprintf("%s: deleted topic's directory %s still on disk", name, e.Name()))
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ongoing, err := kadm.NewClient(cl).ListPartitionReassignments(rctx, nil)
	if err != nil {
		return append(bad, fmt.Sprintf("list reassignments: %v", err))
	}
	ongoing.Each(func(r kadm.ListPartitionReassignmentsResponse) {
		bad = append(bad, fmt.Sprintf("%s-%d: reassignment still going (adding %v, removing %v)", r.Topic, r.Partition, r.AddingReplicas, r.RemovingReplicas))
	})
	sort.Strings(bad)
	return bad
}

// checkMoves: each partition's replicas are a set asked for at or after
// the last accepted request (a request that timed out may have been
// applied after it).
func (a *Admin) checkMoves(who string, ps []kmsg.MetadataResponseTopicPartition) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var bad []string
	for _, p := range ps {
		asked := a.moves[p.Partition]
		from, ok := a.acked[p.Partition]
		if !ok {
			continue // never accepted: the initial set or any asked for
		}
		got := slices.Sorted(slices.Values(p.Replicas))
		match := false
		for _, want := range asked[from:] {
			if slices.Equal(got, slices.Sorted(slices.Values(want))) {
				match = true
			}
		}
		if !match {
			bad = append(bad, fmt.Sprintf("%s: %s-%d on %v, not on a replica set asked for since the last accepted reassignment (%v)",
				who, a.Moves, p.Partition, p.Replicas, asked[from:]))
		}
	}
	return bad
}

// StoreLeftovers lists keys of deleted topics the store still holds once
// history is applied.
func StoreLeftovers(events []StoreEvent) []string {
	live := map[string]bool{}
	for _, e := range events {
		if e.Deleted {
			delete(live, e.Key)
		} else {
			live[e.Key] = true
		}
	}
	var bad []string
	for k := range live {
		topic, _, ok := metadata.ParseTopicsKey(k)
		rest, del := strings.CutPrefix(k, metadata.DeleteTopicsPrefix)
		cfg, isCfg := strings.CutPrefix(k, metadata.TopicConfigsPrefix)
		switch {
		case ok && strings.HasPrefix(topic, churnPrefix), del && rest != "",
			isCfg && strings.HasPrefix(cfg, churnPrefix):
			bad = append(bad, "store: "+k+" left after the topic's deletion")
		}
	}
	sort.Strings(bad)
	return bad
}

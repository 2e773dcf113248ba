package e2e

// Controlled shutdown with real processes: SIGTERM to the broker leading
// partition 0 of an RF=3 topic under continuous acks=all produce. The
// broker asks the controller to move its leadership away before it
// deregisters: in the store's history every partition it led has a new
// leader, and no ISR holds it, when its registration is deleted (without
// controlled shutdown the controller only acts after that deletion). The
// producer sees nothing but retriable errors and every acknowledged record
// is there afterwards.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metadata/metadatatest"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
)

func TestSigtermIsControlledShutdown(t *testing.T) {
	st := startStore(t, "samsa-store")
	// A long session: only the controlled shutdown moves leadership before
	// the registration goes.
	c := startCluster(t, st.endpoint, "metadata.store.session.timeout.ms=30000")
	all := c.addrs(-1)
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	const topic, partitions = "cs", 6
	cl, err := kgo.NewClient(kgo.SeedBrokers(all...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 3, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	cl.Close()
	v := c.waitPartitions(all, topic, "full ISR", func(v map[int32]partitionView) bool {
		return len(v) == partitions && fullISR(3)(v)
	})
	victim := v[0].leader
	var led []int32
	for p, pv := range v {
		if pv.leader == victim {
			led = append(led, p)
		}
	}

	store, err := etcdstore.Connect([]string{st.endpoint}, "/samsa-test", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, rev, err := store.List(ctx, metadata.BrokerIDsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	history := store.WatchPrefix(ctx, "/", rev+1)

	log := &ackLog{}
	stop := make(chan struct{})
	finish := produceUntil(t, all, topic, stop, log)
	for deadline := time.Now().Add(60 * time.Second); log.count() < 1000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	before := log.count()
	c.procs[victim].stop()
	leaders, inISR := metadatatest.StatesAtDeregistration(t, history, victim, topic)
	for _, p := range led {
		if l, ok := leaders[p]; !ok || l < 0 || l == victim {
			t.Errorf("partition %d: leader %d when broker %d deregistered (written: %v)", p, l, victim, ok)
		}
	}
	for p := range int32(partitions) {
		if in, ok := inISR[p]; !ok || in {
			t.Errorf("partition %d: broker %d in the ISR when it deregistered (written: %v)", p, victim, ok)
		}
	}
	if out := c.procs[victim].stderr.String(); !strings.Contains(out, "controlled shutdown succeeded") {
		t.Errorf("broker %d's log does not show a controlled shutdown:\n%s", victim, out)
	}
	others := c.addrs(victim)
	after := c.waitPartitions(others, topic, "no partition led by the stopped broker", func(v map[int32]partitionView) bool {
		for _, pv := range v {
			if pv.leader < 0 || pv.leader == victim || slices.Contains(pv.isr, victim) {
				return false
			}
		}
		return len(v) == partitions
	})

	// The producer goes on with the new leaders.
	for deadline := time.Now().Add(60 * time.Second); log.count() < before+1000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	finish()
	log.mu.Lock()
	acks, errs := slices.Clone(log.acks), log.errs
	log.mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("records failed (only retriable errors, retried, were expected): %v", errs)
	}
	if len(acks) < before+1000 {
		t.Fatalf("only %d records acknowledged, %d before the stop", len(acks), before)
	}
	checkAcked(t, acks, consumeAll(t, others, topic))
	t.Logf("broker %d stopped with SIGTERM, leading %v; leaders after: %v; %d records acknowledged, none lost",
		victim, led, after, len(acks))
}

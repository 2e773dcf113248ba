package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The idempotent producer (franz-go's default: idempotent, acks=all, up to
// 5 requests in flight per broker) against kill -9 of partition leaders and
// of a lone broker: every acknowledged record is in the log exactly once,
// in the order it was produced per partition, however many batches the
// client had to send again.

// checkExactlyOnce checks checkAcked's rules, then that every value in the
// log appears once and, per partition, in production order (the values
// are "<topic>-<9-digit sequence>").
func checkExactlyOnce(t *testing.T, acks []acked, got map[int32]map[int64]string) {
	t.Helper()
	checkAcked(t, acks, got)
	seen := map[string]string{}
	dups := 0
	for p, recs := range got {
		offsets := make([]int64, 0, len(recs))
		for o := range recs {
			offsets = append(offsets, o)
		}
		slices.Sort(offsets)
		prev := ""
		for _, o := range offsets {
			v := recs[o]
			if where, ok := seen[v]; ok {
				if dups < 5 {
					t.Errorf("%q at %d/%d and at %s", v, p, o, where)
				}
				dups++
			}
			seen[v] = fmt.Sprintf("%d/%d", p, o)
			if strings.Compare(v, prev) <= 0 {
				t.Fatalf("partition %d: %q at offset %d after %q", p, v, o, prev)
			}
			prev = v
		}
	}
	if dups > 0 {
		t.Fatalf("%d records written more than once", dups)
	}
}

// TestIdempotentProduceSurvivesLeaderKills: 3 brokers, RF 3, 10 rounds of
// kill -9 of a partition's leader while a default franz-go client produces.
func TestIdempotentProduceSurvivesLeaderKills(t *testing.T) {
	c, all := startReadyCluster(t)
	const topic = "idem"
	c.createTopic(all, topic, 3)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))

	log := &ackLog{}
	stop := make(chan struct{})
	finish := produceWith(t, all, topic, stop, log) // franz-go's defaults: idempotent
	for round := range 10 {
		before := log.count()
		v := c.waitPartitions(all, topic, "full ISR before a kill", fullISR(3))
		victim := v[int32(round%3)].leader
		for deadline := time.Now().Add(30 * time.Second); log.count() < before+500 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		c.procs[victim].kill()
		others := c.addrs(victim)
		c.waitPartitions(others, topic, fmt.Sprintf("round %d: new leaders", round), func(v map[int32]partitionView) bool {
			for _, p := range v {
				if p.leader < 0 || p.leader == victim {
					return false
				}
			}
			return len(v) == 3
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
	checkExactlyOnce(t, acks, consumeAll(t, all, topic))
	t.Logf("%d acknowledged records, each once; producer errors: %v", len(acks), errs)
}

// TestIdempotentProduceAcrossBrokerRestart: the single broker of `samsa
// server` is killed and restarted three times while a default franz-go
// client produces; the batches it sends again after each restart are
// recognised from the producer state the broker rebuilt (snapshot and log).
func TestIdempotentProduceAcrossBrokerRestart(t *testing.T) {
	dir, port := t.TempDir(), freePort(t)
	oneBroker := []string{"metadata.store.session.timeout.ms=2000"}
	p := startServer(t, dir, port, oneBroker...)
	addrs := []string{p.addr}
	const topic = "idem-one"
	c := &cluster{t: t}
	c.createTopic(addrs, topic, 1)
	log := &ackLog{}
	stop := make(chan struct{})
	finish := produceWith(t, addrs, topic, stop, log)
	for round := range 3 {
		before := log.count()
		for deadline := time.Now().Add(30 * time.Second); log.count() < before+1000 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		p.kill()
		p = startServer(t, dir, port, oneBroker...)
		t.Logf("round %d: restarted; %d records acknowledged so far", round, log.count())
	}
	for deadline := time.Now().Add(30 * time.Second); log.count() < 4000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	finish()
	log.mu.Lock()
	acks, errs := slices.Clone(log.acks), log.errs
	log.mu.Unlock()
	if len(acks) < 3000 {
		t.Fatalf("only %d records acknowledged (errors %v)", len(acks), errs)
	}
	checkExactlyOnce(t, acks, consumeAll(t, addrs, topic))
	t.Logf("%d acknowledged records, each once; producer errors: %v", len(acks), errs)
}

package e2e

// Preferred leader election with real processes: a SIGKILLed broker's
// partitions move to other replicas and stay there when it returns, until
// `samsa leader-election --election-type preferred --all-topic-partitions`
// (or, with a short leader.imbalance.check.interval.seconds, the
// controller's automatic rebalance) gives every partition back to its
// first assigned replica.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// leaderPref is one partition's leader and preferred (first) replica.
type leaderPref struct{ leader, preferred int32 }

// leaderPrefs asks addrs for topic's leaders and preferred replicas.
func leaderPrefs(ctx context.Context, addrs []string, topic string) (map[int32]leaderPref, error) {
	parts, err := topicPartitions(ctx, addrs, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]leaderPref{}
	for id, p := range parts {
		if len(p.Replicas) == 0 {
			return nil, fmt.Errorf("%s-%d has no replicas", topic, id)
		}
		out[id] = leaderPref{leader: p.Leader, preferred: p.Replicas[0]}
	}
	return out, nil
}

// waitLeaderPrefs polls until cond holds for every broker in addrs.
func (c *cluster) waitLeaderPrefs(addrs []string, topic, what string, cond func(map[int32]leaderPref) bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var last map[int32]leaderPref
	var lastErr error
	for {
		ok := true
		for _, a := range addrs {
			rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
			last, lastErr = leaderPrefs(rctx, []string{a}, topic)
			rcancel()
			if lastErr != nil || !cond(last) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if ctx.Err() != nil {
			c.t.Fatalf("%s: never happened (last %v, %v)", what, last, lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func allLedByPreferred(v map[int32]leaderPref) bool {
	for _, p := range v {
		if p.leader != p.preferred {
			return false
		}
	}
	return len(v) > 0
}

// bounceNonController SIGKILLs a broker other than the controller that is some
// partition's preferred leader, waits until its partitions have moved
// away, restarts it and waits for the full ISR again. It returns the
// broker.
func (c *cluster) bounceNonController(topic string) int32 {
	c.t.Helper()
	all := c.addrs(-1)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))
	c.waitLeaderPrefs(all, topic, "preferred leaders after creation", allLedByPreferred)
	ctl := c.controllerID(all)
	victim := (ctl + 1) % 3
	c.procs[victim].kill()
	others := c.addrs(victim)
	c.waitLeaderPrefs(others, topic, "leadership away from the killed broker", func(v map[int32]leaderPref) bool {
		for _, p := range v {
			if p.leader == victim || p.leader < 0 {
				return false
			}
		}
		return true
	})
	c.start(victim)
	c.waitPartitions(c.addrs(-1), topic, "full ISR after the restart", fullISR(3))
	return victim
}

// samsaLeaderElection runs `samsa leader-election` and returns its
// stdout, stderr and exit code.
func samsaLeaderElection(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return samsaTool(t, 60*time.Second, "leader-election", args...)
}

// TestPreferredLeaderElectionCLI: after a broker comes back, its
// partitions are still led by others; the CLI moves them back.
func TestPreferredLeaderElectionCLI(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, "auto.leader.rebalance.enable=false")
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	const topic = "pref"
	c.createTopic(c.addrs(-1), topic, 3)
	victim := c.bounceNonController(topic)

	all := c.addrs(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	v, err := leaderPrefs(ctx, all, topic)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	var moved []string
	for p, l := range v {
		if l.preferred == victim && l.leader != victim {
			moved = append(moved, fmt.Sprintf("%s-%d", topic, p))
		}
	}
	if len(moved) == 0 {
		t.Fatalf("broker %d leads its partitions again without an election: %v", victim, v)
	}

	bs := strings.Join(all, ",")
	out, errOut, code := samsaLeaderElection(t, "--bootstrap-server", bs, "--election-type", "preferred", "--all-topic-partitions")
	if code != 0 || !strings.HasPrefix(out, "Successfully completed leader election (PREFERRED) for partitions ") {
		t.Fatalf("leader-election: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, tp := range moved {
		if !strings.Contains(out, tp) {
			t.Errorf("%s not among the elected partitions:\n%s", tp, out)
		}
	}
	c.waitLeaderPrefs(all, topic, "preferred leaders after the election", allLedByPreferred)

	out, _, code = samsaLeaderElection(t, "--bootstrap-server", bs, "--election-type", "preferred", "--topic", topic, "--partition", "0")
	if code != 0 || out != "Valid replica already elected for partitions "+topic+"-0\n" {
		t.Fatalf("second election: exit %d\n%s", code, out)
	}
	out, errOut, code = samsaLeaderElection(t, "--bootstrap-server", bs, "--election-type", "preferred", "--topic", "nosuch", "--partition", "0")
	if code != 1 || !strings.Contains(out, "Error completing leader election (PREFERRED) for partition: nosuch-0: org.apache.kafka.common.errors.UnknownTopicOrPartitionException") ||
		!strings.Contains(errOut, "1 replica(s) could not be elected") {
		t.Fatalf("unknown partition: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestAutoLeaderRebalance: with the check every 2 s, the controller gives
// the returning broker its partitions back by itself.
func TestAutoLeaderRebalance(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, "leader.imbalance.check.interval.seconds=2")
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	const topic = "auto"
	c.createTopic(c.addrs(-1), topic, 3)
	c.bounceNonController(topic)
	c.waitLeaderPrefs(c.addrs(-1), topic, "preferred leaders restored by the controller", allLedByPreferred)
}

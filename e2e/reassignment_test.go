package e2e

// Partition reassignment with real processes (KIP-455): under continuous
// acks=all produce, `samsa reassign-partitions --execute` moves an RF=2
// partition from brokers {0,1} to {1,2} and an RF=1 partition from {0} to
// {2} — both led by broker 0, which leaves them — and `--verify` reports
// them completed. Metadata then shows the new replicas and leaders, broker
// 0 has renamed its copies for deletion, and every acknowledged record is
// read back from the new leaders.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createAssigned creates topic with a manual replica assignment.
func createAssigned(t *testing.T, addrs []string, topic string, assignment [][]int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 20000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, rs := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 {
			return
		}
		if err == nil {
			err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		}
		if ctx.Err() != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		t.Logf("create %s: %v", topic, err)
		time.Sleep(100 * time.Millisecond)
	}
}

// replicasOf returns each partition's replica list and leader from Metadata.
func replicasOf(ctx context.Context, addrs []string, topic string) (map[int32][]int32, map[int32]int32, error) {
	parts, err := topicPartitions(ctx, addrs, topic)
	if err != nil {
		return nil, nil, err
	}
	replicas, leaders := map[int32][]int32{}, map[int32]int32{}
	for id, p := range parts {
		replicas[id], leaders[id] = p.Replicas, p.Leader
	}
	return replicas, leaders, nil
}

// samsaReassign runs `samsa reassign-partitions` and returns its output
// (stdout then stderr) and exit code.
func samsaReassign(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, errOut, code := samsaTool(t, 90*time.Second, "reassign-partitions", args...)
	return out + errOut, code
}

func TestReassignPartitionsUnderProduce(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	all := c.addrs(-1)
	bs := strings.Join(all, ",")
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	// A topic's partitions share one replication factor: one topic each.
	createAssigned(t, all, "rf2", [][]int32{{0, 1}})
	createAssigned(t, all, "rf1", [][]int32{{0}})
	c.waitPartitions(all, "rf2", "rf2 led by broker 0, full ISR", func(v map[int32]partitionView) bool {
		return len(v) == 1 && v[0].leader == 0 && len(v[0].isr) == 2
	})
	c.waitPartitions(all, "rf1", "rf1 led by broker 0", func(v map[int32]partitionView) bool { return len(v) == 1 && v[0].leader == 0 })

	logs := map[string]*ackLog{"rf2": {}, "rf1": {}}
	stop := make(chan struct{})
	var finish []func()
	for topic, log := range logs {
		finish = append(finish, produceUntil(t, all, topic, stop, log))
	}
	acked := func() int { return logs["rf2"].count() + logs["rf1"].count() }
	for deadline := time.Now().Add(30 * time.Second); acked() < 1000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}

	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[
		{"topic":"rf2","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},
		{"topic":"rf1","partition":0,"replicas":[2]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := samsaReassign(t, "--bootstrap-server", bs, "--execute", "--reassignment-json-file", plan)
	want := "Current partition replica assignment\n\n" +
		`{"version":1,"partitions":[{"topic":"rf1","partition":0,"replicas":[0],"log_dirs":["any"]},` +
		`{"topic":"rf2","partition":0,"replicas":[0,1],"log_dirs":["any","any"]}]}` +
		"\n\nSave this to use as the --reassignment-json-file option during rollback\n" +
		"Successfully started partition reassignments for rf1-0,rf2-0\n"
	if code != 0 || out != want {
		t.Fatalf("--execute: exit %d\n%s", code, out)
	}
	t.Logf("reassignment started after %d acknowledged records", acked())

	deadline := time.Now().Add(90 * time.Second)
	for {
		out, code = samsaReassign(t, "--bootstrap-server", bs, "--verify", "--reassignment-json-file", plan)
		if code != 0 || !strings.HasPrefix(out, "Status of partition reassignment:\n") {
			t.Fatalf("--verify: exit %d\n%s", code, out)
		}
		if strings.Contains(out, "Reassignment of partition rf1-0 is completed.\nReassignment of partition rf2-0 is completed.") {
			break
		}
		// Otherwise in progress, or done while the broker that answered
		// Metadata has not heard yet (Kafka's tool then says "There is no
		// active reassignment …, but replica set is …").
		if time.Now().After(deadline) {
			t.Fatalf("--verify never reported completion:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if out, code = samsaReassign(t, "--bootstrap-server", bs, "--list"); code != 0 || out != "No partition reassignments found.\n" {
		t.Fatalf("--list: exit %d\n%s", code, out)
	}

	// Every broker's metadata shows the new replica sets, led by one of them.
	for id, p := range c.procs {
		for topic, target := range map[string][]int32{"rf2": {1, 2}, "rf1": {2}} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			for {
				replicas, leaders, err := replicasOf(ctx, []string{p.addr}, topic)
				if err == nil && slices.Equal(replicas[0], target) && slices.Contains(target, leaders[0]) {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("broker %d shows %s with replicas %v, leaders %v (%v)", id, topic, replicas, leaders, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			cancel()
		}
	}

	// More acknowledged traffic on the new leaders, then stop producing.
	before := acked()
	for deadline := time.Now().Add(30 * time.Second); acked() < before+1000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	for _, f := range finish {
		f()
	}
	if acked() < before+1000 {
		t.Fatalf("only %d records acknowledged, %d before the move completed", acked(), before)
	}

	// Broker 0 hosts neither partition any more: its copies are renamed
	// for deletion (log.segment.delete.delay.ms keeps them a minute).
	for _, tc := range []struct {
		broker        int32
		topic         string
		live, renamed int
	}{{0, "rf2", 0, 1}, {0, "rf1", 0, 1}, {1, "rf2", 1, 0}, {1, "rf1", 0, 0}, {2, "rf2", 1, 0}, {2, "rf1", 1, 0}} {
		live, renamed := partitionDirs(c.dirs[tc.broker], tc.topic)
		if live != tc.live || renamed != tc.renamed {
			t.Errorf("broker %d: %d live and %d renamed directories of %s, want %d and %d", tc.broker, live, renamed, tc.topic, tc.live, tc.renamed)
		}
	}

	// Every acknowledged record is read back, from the new leaders.
	for topic, log := range logs {
		log.mu.Lock()
		acks, errs := slices.Clone(log.acks), log.errs
		log.mu.Unlock()
		got := consumeAll(t, []string{c.procs[2].addr}, topic)
		checkAcked(t, acks, got)
		t.Logf("%s: %d acknowledged records, none lost; producer errors (retried): %v", topic, len(acks), errs)
	}
}

// TestReassignAwayWhileBrokerDown: a partition reassigned away from a dead
// broker completes without it (Kafka does not wait for a removed replica),
// so that broker comes back with a copy it no longer holds a replica of.
// The controller's full metadata snapshot tells it so: the copy is set
// aside as <topic>-<p>.<uuid>-stray, not served, and deleted after
// log.segment.delete.delay.ms (1 s here).
func TestReassignAwayWhileBrokerDown(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint, "log.segment.delete.delay.ms=1000")
	all := c.addrs(-1)
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	createAssigned(t, all, "away", [][]int32{{0, 1}})
	c.waitPartitions(all, "away", "away on 0 and 1, full ISR", func(v map[int32]partitionView) bool {
		return len(v) == 1 && len(v[0].isr) == 2
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pc, err := kgo.NewClient(kgo.SeedBrokers(all...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("away"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pc.Close()
	stray := func() []string {
		m, _ := filepath.Glob(filepath.Join(c.dirs[0], "away-0.*-stray"))
		return m
	}
	if live, _ := partitionDirs(c.dirs[0], "away"); live != 1 || len(stray()) != 0 {
		t.Fatalf("broker 0 holds %d directories of away, strays %v; want its copy", live, stray())
	}

	c.procs[0].kill()
	rest := c.addrs(0)
	bs := strings.Join(rest, ",")
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"away","partition":0,"replicas":[1,2]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := samsaReassign(t, "--bootstrap-server", bs, "--execute", "--reassignment-json-file", plan); code != 0 {
		t.Fatalf("--execute: exit %d\n%s", code, out)
	}
	for {
		replicas, _, err := replicasOf(ctx, rest, "away")
		if err == nil && slices.Equal(replicas[0], []int32{1, 2}) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("away-0 never moved to [1 2]: %v %v%s", replicas, err, c.logTails())
		}
		time.Sleep(100 * time.Millisecond)
	}

	c.start(0)
	c.waitView(c.procs[0].addr, "broker 0 back", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	for deadline := time.Now().Add(30 * time.Second); len(stray()) != 1; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			live, deleted := partitionDirs(c.dirs[0], "away")
			t.Fatalf("broker 0's copy of away-0 not set aside: %d live, %d deleted directories, strays %v%s", live, deleted, stray(), c.logTails())
		}
	}
	if _, err := os.Stat(filepath.Join(c.dirs[0], "away-0")); !os.IsNotExist(err) {
		t.Fatalf("broker 0 still has a live away-0 beside its stray copy: %v", err)
	}
	// The broker logs the warning once the directory is renamed: wait for it.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(c.procs[0].stderr.String(), "a stray partition log is set aside"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("no warning in broker 0's log")
			break
		}
	}
	for deadline := time.Now().Add(30 * time.Second); len(stray()) != 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("broker 0's stray copy %v not deleted 30 s after a 1 s delay", stray())
		}
	}
	// The record is still there, on the replicas that hold it now.
	if got := consumeAll(t, rest, "away"); len(got[0]) != 1 || got[0][0] != "before" {
		t.Fatalf("consumed %v", got)
	}
}

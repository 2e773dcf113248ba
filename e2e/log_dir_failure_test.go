package e2e

// A full disk (issue 21): the broker whose only log dir is a small tmpfs
// that fills up halts as Kafka's does (all log dirs failed), the other
// brokers take over its leaderships once its session ends, acks=all
// producing goes on, and after the disk is freed and the broker restarted
// it rejoins the ISR.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// mountTmpfs mounts a tmpfs of size at a new dir, unmounted at cleanup;
// the test is skipped where mounting is not allowed.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillDir writes a file in dir until the file system is full.
func fillDir(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "fill")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return path
		}
	}
}

func TestFullLogDirHaltsBroker(t *testing.T) {
	full := mountTmpfs(t, "8m")
	st := startStore(t, "samsa-store")
	const victim = int32(2)
	c := &cluster{t: t, storeKey: "metadata.store.connect", connect: st.endpoint + "/samsa-test", procs: map[int32]*proc{}, ports: map[int32]int{}, dirs: map[int32]string{}}
	for id := int32(0); id < 3; id++ {
		c.ports[id], c.dirs[id] = freePort(t), t.TempDir()
		if id == victim {
			c.dirs[id] = full
		}
		c.start(id)
	}
	all := c.addrs(-1)
	c.waitView(all[0], "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	const topic = "diskfull"
	cl, err := kgo.NewClient(kgo.SeedBrokers(all...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	minISR := "2"
	res, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": &minISR}, topic)
	cancel()
	cl.Close()
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	c.waitPartitions(all, topic, "full ISR", fullISR(3))
	v := c.waitPartitions(all, topic, "a partition led by the broker to fail", func(v map[int32]partitionView) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(v)), func(p partitionView) bool { return p.leader == victim })
	})
	t.Logf("partitions before the disk fills: %v", v)

	log := &ackLog{}
	stop := make(chan struct{})
	finish := produceUntil(t, all, topic, stop, log)
	waitAcks(t, log, 500)

	fill := fillDir(t, full)
	p := c.procs[victim]
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("broker %d still runs 60 s after its only log dir filled up%s", victim, c.logTails())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("broker %d exited with %d, want 1 (halt)", victim, code)
	}
	if want := "Shutdown broker because all log dirs in " + full + " have failed"; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("broker %d's log lacks %q%s", victim, want, c.logTails())
	}
	others := c.addrs(victim)
	c.waitPartitions(others, topic, "leaders away from the halted broker", func(v map[int32]partitionView) bool {
		for _, p := range v {
			if p.leader < 0 || p.leader == victim {
				return false
			}
		}
		return len(v) > 0
	})
	waitAcks(t, log, log.count()+500)

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	c.start(victim)
	c.waitPartitions(all, topic, "the restarted broker back in every ISR", fullISR(3))
	waitAcks(t, log, log.count()+200)
	close(stop)
	finish()
	log.mu.Lock()
	acks, errs := slices.Clone(log.acks), log.errs
	log.mu.Unlock()
	checkAcked(t, acks, consumeAll(t, all, topic))
	t.Logf("%d acknowledged records, none lost; producer errors (retried): %v", len(acks), errs)
}

// waitAcks waits until log holds n acknowledgements.
func waitAcks(t *testing.T, log *ackLog, n int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for log.count() < n {
		if time.Now().After(deadline) {
			log.mu.Lock()
			defer log.mu.Unlock()
			t.Fatalf("only %d of %d records acknowledged (errors %v)", len(log.acks), n, log.errs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A broker with two log dirs goes on when one fills up (Kafka's JBOD): the
// full one is taken offline and the broker's metrics say so (Kafka's
// OfflineLogDirectoryCount); the partition on the other still takes
// records.
func TestFullLogDirOfTwoCounted(t *testing.T) {
	full, other := mountTmpfs(t, "8m"), t.TempDir()
	mport := freePort(t)
	p := startServer(t, other+","+full, freePort(t), fmt.Sprintf("metrics.listener=127.0.0.1:%d", mport))
	offline := func() float64 { return metricOf(t, mport, "samsa_log_manager_offline_log_directories") }
	if n := offline(); n != 0 {
		t.Fatalf("%v offline log dirs at the start", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(1), kgo.RecordDeliveryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Two partitions: one in each log dir (the one with fewer partitions).
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "jbod"); err != nil {
		t.Fatal(err)
	}
	onFull := int32(-1)
	for part := range int32(2) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "jbod", Partition: part, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("partition %d: %v", part, err)
		}
		if _, err := os.Stat(filepath.Join(full, fmt.Sprintf("jbod-%d", part))); err == nil {
			onFull = part
		}
	}
	if onFull < 0 {
		t.Fatalf("no partition of jbod in %s", full)
	}
	fillDir(t, full)
	value := make([]byte, 64<<10)
	for n := 0; offline() != 1; n++ {
		if n == 200 {
			t.Fatalf("the full log dir is not counted offline after 200 records%s", p.stderr.String())
		}
		cl.ProduceSync(ctx, &kgo.Record{Topic: "jbod", Partition: onFull, Value: value}) // fails once the dir is offline
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "jbod", Partition: 1 - onFull, Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatalf("the partition on the healthy log dir: %v", err)
	}
}

package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionDirs lists a topic's partition directories in a log dir, live
// (<t>-<p>) and renamed for deletion (<t>-<p>.<id>-delete).
func partitionDirs(dir, topic string) (live, renamed int) {
	m, _ := filepath.Glob(filepath.Join(dir, topic+"-*"))
	for _, d := range m {
		if strings.HasSuffix(d, "-delete") {
			renamed++
		} else {
			live++
		}
	}
	return live, renamed
}

// TestDeleteTopicWhileBrokerDown: a topic with a replica on a dead broker is
// not deleted — DeleteTopics times out as Kafka's does — and the controller
// dies too; once both brokers are back, the new controller completes the
// deletion by itself: the topic leaves metadata, every broker renames its
// directories and later removes them. Re-creating the name gives a new id.
func TestDeleteTopicWhileBrokerDown(t *testing.T) { testDeleteTopicWhileBrokerDown(t, "samsa-store") }

// TestDeleteTopicWhileBrokerDownZooKeeper: the same on Debian's ZooKeeper.
func TestDeleteTopicWhileBrokerDownZooKeeper(t *testing.T) {
	testDeleteTopicWhileBrokerDown(t, "zookeeper")
}

func testDeleteTopicWhileBrokerDown(t *testing.T, storeKind string) {
	st := startStore(t, storeKind)
	c := startClusterOn(t, st, "log.segment.delete.delay.ms=500", "log.retention.check.interval.ms=200")
	ctrl := c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	c.createTopic(c.addrs(-1), "doomed", 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx, "doomed")
	if err != nil {
		t.Fatal(err)
	}
	oldID := td["doomed"].ID
	// One record per partition: a partition's directory exists once written.
	pr, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...), kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "doomed", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pr.Close()
	liveDirs := func() int {
		n := 0
		for id := range c.procs {
			live, _ := partitionDirs(c.dirs[id], "doomed")
			n += live
		}
		return n
	}
	before := liveDirs()
	if before == 0 {
		t.Fatal("no partition directories after writing")
	}

	down := (ctrl + 1) % 3
	c.procs[down].kill()
	c.waitView(c.procs[ctrl].addr, "the controller noticing the dead broker", func(n int, _ int32) bool { return n == 2 })

	adm.SetTimeoutMillis(3000) // the broker answers REQUEST_TIMED_OUT after this
	dctx, dcancel := context.WithTimeout(ctx, 20*time.Second)
	resp, err := adm.DeleteTopics(dctx, "doomed")
	dcancel()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(resp["doomed"].Err, kerr.RequestTimedOut) {
		t.Fatalf("delete with a dead replica: %v, want REQUEST_TIMED_OUT", resp["doomed"].Err)
	}
	if n := liveDirs(); n != before {
		t.Fatalf("%d live partition dirs while the deletion waits, want %d", n, before)
	}

	// The controller dies mid-deletion; the dead broker returns, then the
	// old controller as an ordinary broker.
	c.procs[ctrl].kill()
	c.start(down)
	next := c.waitView(c.procs[down].addr, "a new controller", func(n int, nc int32) bool { return nc >= 0 && nc != ctrl })
	c.start(ctrl)
	c.waitView(c.procs[next].addr, "all three brokers", func(n int, _ int32) bool { return n == 3 })

	for {
		fresh, err := kgo.NewClient(kgo.SeedBrokers(c.procs[next].addr))
		if err != nil {
			t.Fatal(err)
		}
		td, err := kadm.NewClient(fresh).ListTopics(ctx)
		fresh.Close()
		gone := err == nil && !td.Has("doomed")
		dirsGone := true
		for id := range c.procs {
			if live, renamed := partitionDirs(c.dirs[id], "doomed"); live+renamed > 0 {
				dirsGone = false
			}
		}
		if gone && dirsGone {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("deletion never completed (in metadata: %v, dirs left: %v)", !gone, !dirsGone)
		}
		time.Sleep(100 * time.Millisecond)
	}

	c.createTopic([]string{c.procs[next].addr}, "doomed", 3)
	fresh, err := kgo.NewClient(kgo.SeedBrokers(c.procs[next].addr))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	td, err = kadm.NewClient(fresh).ListTopics(ctx, "doomed")
	if err != nil || td["doomed"].ID == oldID {
		t.Fatalf("re-created topic: %v, id %v (old %v)", err, td["doomed"].ID, oldID)
	}
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDynamicCleanerConfigs: log.cleaner.threads=2 (and a 20 ms
// log.cleaner.backoff.ms) set at <default> with kadm is accepted, described
// as DYNAMIC_DEFAULT_BROKER_CONFIG, and every broker restarts its cleaner
// with it; a compacted topic is compacted afterwards. Thread counts Kafka's
// LogCleaner refuses (0, more than double the running count) are
// INVALID_CONFIG with Kafka's messages.
func TestDynamicCleanerConfigs(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "log.cleaner.threads", Value: kadm.StringPtr("2")},
		{Op: kadm.SetConfig, Name: "log.cleaner.backoff.ms", Value: kadm.StringPtr("20")},
	})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("alter <default>: %v %+v", err, res)
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe <default>: %v %+v", err, rcs)
	}
	threads, err := rcs.On("", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cfg := range threads.Configs {
		if cfg.Key == "log.cleaner.threads" {
			found = cfg.Value != nil && *cfg.Value == "2" && cfg.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig
		}
	}
	if !found {
		t.Fatalf("<default> described without log.cleaner.threads=2 (DYNAMIC_DEFAULT_BROKER_CONFIG): %+v", threads.Configs)
	}
	reconfigured := regexp.MustCompile(`msg="storage: log cleaner reconfigured" .*threads=2 .*backoff=20ms restarted=true`)
	for id, p := range c.procs {
		for deadline := time.Now().Add(30 * time.Second); !reconfigured.MatchString(p.stderr.String()); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("broker %d never restarted its cleaner with 2 threads%s", id, c.logTails())
			}
		}
	}

	for _, bad := range []struct{ value, msg string }{
		{"0", "Log cleaner threads should be at least 1"},
		{"5", "Log cleaner threads cannot be increased to more than double the current value 2"},
	} {
		res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.cleaner.threads", Value: kadm.StringPtr(bad.value)}})
		if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.InvalidConfig) || res[0].ErrMessage != bad.msg {
			t.Fatalf("log.cleaner.threads=%s: %v %+v; want INVALID_CONFIG %q", bad.value, err, res, bad.msg)
		}
	}

	cfgs := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("200"),
		"segment.ms": kadm.StringPtr("50")}
	createTopic(ctx, t, adm, "compacted", cfgs)
	want := map[string]string{}
	const produced = 300
	for i := range produced {
		k, v := fmt.Sprintf("key-%d", i%10), fmt.Sprintf("value-%d", i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "compacted", Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	for {
		got, n, _ := consumeLatest(t, ctx, c.procs[0].addr, "compacted")
		if maps.Equal(got, want) && n < produced/2 {
			t.Logf("%d records of %d produced", n, produced)
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("not compacted: %d records of %d, latest %v%s", n, produced, got, c.logTails())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDynamicUncleanLeaderElection: an RF=2 partition whose follower
// stopped (the ISR shrinks to the leader) and whose leader was then
// killed stays leaderless when the old follower comes back, unclean
// election being off; unclean.leader.election.enable=true set at
// <default> with kadm makes the controller elect the old follower, which
// then takes acks=all writes.
func TestDynamicUncleanLeaderElection(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	c.waitView(c.procs[0].addr, "3 brokers and a controller", func(n int, ctl int32) bool { return n == 3 && ctl >= 0 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs(-1)...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(3))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		res, err := adm.CreateTopic(ctx, 1, 2, nil, "unclean")
		if err == nil && res.Err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("create: %v %v", err, res.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	produceN(ctx, t, cl, "unclean", 10)
	leader, follower := partitionLeader(ctx, t, adm, "unclean", func(p kadm.PartitionDetail) bool { return p.Leader >= 0 && len(p.ISR) == 2 })
	c.procs[follower].stop()
	partitionLeader(ctx, t, adm, "unclean", func(p kadm.PartitionDetail) bool {
		return p.Leader == leader && len(p.ISR) == 1 && p.ISR[0] == leader
	})
	produceN(ctx, t, cl, "unclean", 10)
	c.procs[leader].kill()
	c.start(follower)
	live := c.addrs(leader)
	acl, err := kgo.NewClient(kgo.SeedBrokers(live...))
	if err != nil {
		t.Fatal(err)
	}
	defer acl.Close()
	adm = kadm.NewClient(acl)
	partitionLeader(ctx, t, adm, "unclean", func(p kadm.PartitionDetail) bool { return p.Leader < 0 })
	for {
		m, err := adm.BrokerMetadata(ctx)
		if err == nil && len(m.Brokers) == 2 && m.Brokers.NodeIDs()[0] != leader && m.Brokers.NodeIDs()[1] != leader &&
			(m.Brokers.NodeIDs()[0] == follower || m.Brokers.NodeIDs()[1] == follower) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("broker %d never registered again: %v", follower, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Leaderless for a while: no replica of the ISR is alive.
	for until := time.Now().Add(3 * time.Second); time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
		partitionLeader(ctx, t, adm, "unclean", func(p kadm.PartitionDetail) bool {
			if p.Leader >= 0 {
				t.Fatalf("unclean.leader.election.enable=false, yet %d leads with ISR %v", p.Leader, p.ISR)
			}
			return true
		})
	}

	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: kadm.StringPtr("true")}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("alter <default>: %v %+v", err, res)
	}
	partitionLeader(ctx, t, adm, "unclean", func(p kadm.PartitionDetail) bool { return p.Leader == follower })
	pcl, err := kgo.NewClient(kgo.SeedBrokers(live...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: "unclean", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after the unclean election: %v", err)
	}
}

// partitionLeader polls partition 0 of topic until cond holds, and returns
// its leader and another replica.
func partitionLeader(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, cond func(kadm.PartitionDetail) bool) (leader, other int32) {
	t.Helper()
	var last string
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && td[topic].Err == nil {
			if p, ok := td[topic].Partitions[0]; ok {
				last = fmt.Sprintf("leader %d replicas %v isr %v", p.Leader, p.Replicas, p.ISR)
				if cond(p) {
					for _, r := range p.Replicas {
						if r != p.Leader {
							return p.Leader, r
						}
					}
					return p.Leader, -1
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: never as wanted (last: %s, %v)", topic, last, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker answers clients only once it has registered and caught up with
// the controller's metadata (api/ready.go). Each test keeps a client
// sending Metadata to one broker alone (its seed connection, never the
// brokers it learns of) while that broker restarts or loses its store
// session, and checks every answer it gets: at least the brokers that
// stayed up, a controller, and the topic with all its partitions.

// prober sends Metadata to one broker in a loop and records what is wrong
// with the answers it gets; errors (connection refused or closed, time-outs)
// are no answer and fine.
type prober struct {
	addr   string
	topic  string
	parts  int
	minBrk int
	// minEpochs, if set: each partition's leader epoch must be at least
	// this (an answer from metadata older than that is stale).
	minEpochs map[int32]int32

	mu       sync.Mutex
	answers  int
	failures []string
}

func (p *prober) run(ctx context.Context) {
	for ctx.Err() == nil {
		p.probe(ctx)
		time.Sleep(20 * time.Millisecond)
	}
}

// probe asks once, on a new client (a bootstrap, as a restarted pod's
// client makes), through the seed broker only.
func (p *prober) probe(ctx context.Context) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.RequestRetries(0))
	if err != nil {
		return
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(p.topic)
	req.Topics = append(req.Topics, t)
	seed := cl.Broker(math.MinInt32) // the first seed broker
	raw, err := seed.Request(rctx, req)
	if err != nil {
		return
	}
	resp := raw.(*kmsg.MetadataResponse)
	var bad string
	switch {
	case len(resp.Brokers) < p.minBrk:
		bad = fmt.Sprintf("%d brokers", len(resp.Brokers))
	case resp.ControllerID < 0:
		bad = fmt.Sprintf("controller %d", resp.ControllerID)
	case len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != p.parts:
		bad = fmt.Sprintf("topic %s: %+v", p.topic, resp.Topics)
	default:
		for _, pt := range resp.Topics[0].Partitions {
			if pt.LeaderEpoch < p.minEpochs[pt.Partition] {
				bad = fmt.Sprintf("stale partition %d: leader %d epoch %d, want epoch >= %d",
					pt.Partition, pt.Leader, pt.LeaderEpoch, p.minEpochs[pt.Partition])
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers++
	if bad != "" && len(p.failures) < 20 {
		p.failures = append(p.failures, bad)
	}
}

func (p *prober) result() (answers int, failures []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answers, append([]string(nil), p.failures...)
}

// startProber probes c's broker id until the returned stop is called.
func (c *cluster) startProber(id int32, topic string, parts, minBrokers int, minEpochs map[int32]int32) (*prober, func()) {
	p := &prober{addr: c.procs[id].addr, topic: topic, parts: parts, minBrk: minBrokers, minEpochs: minEpochs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	return p, func() { cancel(); <-done }
}

func (c *cluster) checkProber(p *prober, what string) {
	c.t.Helper()
	answers, failures := p.result()
	if len(failures) > 0 {
		c.t.Fatalf("%s: %d answers, wrong ones: %v", what, answers, failures)
	}
	if answers == 0 {
		c.t.Fatalf("%s: the broker never answered", what)
	}
	c.t.Logf("%s: %d answers, all complete", what, answers)
}

// Five restarts after kill -9 of the same broker: while it waits out its
// previous registration and rejoins, its answers are never an empty or
// partial cluster.
func TestRestartedBrokerAnswersOnlyWhenCaughtUp(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	const victim = 2
	c.createTopic(c.addrs(-1), "ready", 3)
	c.waitView(c.procs[victim].addr, "all brokers seen", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	for round := 1; round <= 5; round++ {
		c.procs[victim].kill()
		c.start(victim) // returns once it listens: before it has registered
		p, stop := c.startProber(victim, "ready", 3, 2, nil)
		c.waitView(c.procs[victim].addr, "restarted broker caught up", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
		time.Sleep(300 * time.Millisecond)
		stop()
		c.checkProber(p, fmt.Sprintf("restart %d", round))
	}
}

// A broker stopped (SIGSTOP) past its session timeout loses its
// registration; once continued, it answers only after registering again
// and catching up, never from the metadata it had before the stall.
func TestStalledBrokerAnswersOnlyWhenCaughtUp(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	const victim = 2
	c.createTopic(c.addrs(-1), "ready", 3)
	c.waitView(c.procs[victim].addr, "all brokers seen", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	for round := 1; round <= 2; round++ {
		pid := c.procs[victim].cmd.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// The others see it gone (its session expired) and lead its
		// partitions in new leader epochs: the victim's cache, from before
		// the stall, has older ones.
		c.waitView(c.procs[0].addr, "stopped broker's registration expired", func(n int, ctrl int32) bool { return n == 2 && ctrl >= 0 })
		moved := c.waitPartitions([]string{c.procs[0].addr}, "ready", "leaders moved off the stopped broker", func(m map[int32]partitionView) bool {
			for _, v := range m {
				if v.leader == victim || v.leader < 0 {
					return false
				}
			}
			return len(m) == 3
		})
		epochs := map[int32]int32{}
		for id, v := range moved {
			epochs[id] = v.epoch
		}
		p, stop := c.startProber(victim, "ready", 3, 3, epochs)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		c.waitView(c.procs[0].addr, "continued broker registered again", func(n int, ctrl int32) bool { return n == 3 })
		c.waitView(c.procs[victim].addr, "continued broker caught up", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
		time.Sleep(300 * time.Millisecond)
		stop()
		c.checkProber(p, fmt.Sprintf("stall %d", round))
		if log := c.procs[victim].stderr.String(); !strings.Contains(log, "not serving clients until registered again") {
			t.Fatalf("the stalled broker did not say it stopped serving:\n%s", log)
		}
	}
}

// A second broker with a live broker's id listens, says every few seconds
// why it cannot register, answers no client meanwhile, and gives up.
func TestDuplicateBrokerIDSaysWhyAndServesNoClient(t *testing.T) {
	st := startStore(t, "samsa-store")
	c := startCluster(t, st.endpoint)
	c.createTopic(c.addrs(-1), "ready", 3)
	dup := startServer(t, t.TempDir(), freePort(t), "broker.id=1", "metadata.store.connect="+c.connect,
		fmt.Sprintf("metadata.store.session.timeout.ms=%d", sessionTimeoutMs))
	p := &prober{addr: dup.addr, topic: "ready", parts: 3, minBrk: 3}
	for i := 0; i < 3; i++ {
		p.probe(context.Background())
	}
	if answers, _ := p.result(); answers != 0 {
		t.Fatalf("the unregistered broker answered Metadata %d times", answers)
	}
	select {
	case <-dup.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the duplicate broker did not give up")
	}
	log := dup.stderr.String()
	if n := strings.Count(log, "not serving clients: cannot register yet"); n < 2 {
		t.Fatalf("said why %d times, want every few seconds:\n%s", n, log)
	}
	if !strings.Contains(log, "another live broker is registered with broker.id=1") {
		t.Fatalf("did not say why it gave up:\n%s", log)
	}
}

// A broker restarted while its previous registration still holds its id,
// and whose store then stops answering for longer than the broker waits
// for a duplicate id (twice the session + 2 s), keeps waiting for the
// store and registers once it answers: an unreachable store says nothing
// of another broker. Found by the fault campaign (a store majority cut off
// while a broker restarted); before, the broker exited.
func TestBrokerWaitsOutStoreOutageWhileRegistering(t *testing.T) {
	st := startStore(t, "samsa-store")
	dir, port := t.TempDir(), freePort(t)
	props := []string{"broker.id=1", "metadata.store.connect=" + st.endpoint,
		fmt.Sprintf("metadata.store.session.timeout.ms=%d", sessionTimeoutMs)}
	b := startServer(t, dir, port, props...)
	waitLog(t, b, "msg=registered", 30*time.Second)
	b.kill()
	b = startServer(t, dir, port, props...)
	waitLog(t, b, "not serving clients: cannot register yet", 30*time.Second)
	if err := st.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	outage := 2*time.Duration(sessionTimeoutMs)*time.Millisecond + 5*time.Second
	select {
	case <-b.done:
		st.cmd.Process.Signal(syscall.SIGCONT)
		t.Fatalf("the broker exited during the store outage:\n%s", b.stderr.String())
	case <-time.After(outage):
	}
	if err := st.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitLog(t, b, "msg=registered", 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the broker does not answer Metadata after registering:\n%s", b.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLog waits until p's log has s, failing if p exits first.
func waitLog(t *testing.T, p *proc, s string, bound time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(bound); !strings.Contains(p.stderr.String(), s); time.Sleep(50 * time.Millisecond) {
		select {
		case <-p.done:
			t.Fatalf("samsa exited before logging %q:\n%s", s, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("samsa did not log %q within %s:\n%s", s, bound, p.stderr.String())
		}
	}
}

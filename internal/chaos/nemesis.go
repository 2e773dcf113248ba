package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A fault is applied, held, then healed. kinds lists them; the nemesis
// picks one at random (from the run's seed) for each step.
type fault struct {
	name string
	// majority: the fault leaves a majority of every ISR and of the store
	// reachable from each other and from the partitions' leaders, so a
	// partition must be writable again within the session timeout + 1 s
	// (the goal).
	majority bool
	apply    func(ctx context.Context, n *Nemesis) (target string, err error)
}

var kinds = []fault{
	{"kill-broker", true, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.anyBroker()
		p.Kill()
		return p.Name, nil
	}},
	{"kill-controller", true, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.controller(ctx)
		p.Kill()
		return p.Name, nil
	}},
	{"kill-store-member", true, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.c.Stores[n.rng.Intn(len(n.c.Stores))]
		p.Kill()
		return p.Name, nil
	}},
	{"pause-controller", true, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.controller(ctx)
		p.Stop()
		n.hold = max(n.hold, time.Duration(n.c.SessionTimeoutMs)*time.Millisecond+time.Duration(1+n.rng.Intn(3))*time.Second)
		return p.Name + " (zombie past its session)", nil
	}},
	{"partition-controller-store", true, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.controller(ctx)
		return p.Name + " | store", n.cutAll(ctx, []*Host{p.Host}, n.hosts(n.c.Stores))
	}},
	// A leader cut off from its followers keeps its store session, so it
	// stays leader (Kafka's ZooKeeper-era design): acks=all waits until it
	// shrinks the ISR (replica.lag.time.max.ms), then min.insync.replicas
	// refuses writes until the heal. No majority of the ISR is reachable
	// from the leader, so the availability goal does not apply.
	{"partition-leader-followers", false, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.leader(ctx)
		return p.Name + " | other brokers", n.cutAll(ctx, []*Host{p.Host}, n.hosts(n.others(p)))
	}},
	{"isolate-broker", true, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.anyBroker()
		rest := append(n.hosts(n.others(p)), n.hosts(n.c.Stores)...)
		return p.Name + " | everything", n.cutAll(ctx, []*Host{p.Host}, append(rest, n.c.Net.Client()))
	}},
	{"store-minority", true, func(ctx context.Context, n *Nemesis) (string, error) {
		s := n.c.Stores[n.rng.Intn(len(n.c.Stores))]
		rest := append(n.hosts(n.c.Brokers), n.hosts(n.storesBut(s))...)
		return s.Name + " | everything", n.cutAll(ctx, []*Host{s.Host}, rest)
	}},
	{"store-majority", false, func(ctx context.Context, n *Nemesis) (string, error) {
		keep := n.c.Stores[n.rng.Intn(len(n.c.Stores))]
		lost := n.storesBut(keep)
		rest := append(n.hosts(n.c.Brokers), keep.Host)
		return lost[0].Name + "," + lost[1].Name + " | everything", n.cutAll(ctx, n.hosts(lost), rest)
	}},
	{"partition-client-broker", false, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.anyBroker()
		return "client | " + p.Name, n.c.Net.Cut(ctx, n.c.Net.Client(), p.Host)
	}},
	// A slow link degrades a leader without failing it: nothing fails
	// over, so the goal (a failover within the session) does not apply.
	{"slow-broker", false, func(ctx context.Context, n *Nemesis) (string, error) {
		p := n.anyBroker()
		how, err := n.c.Net.Slow(ctx, p.Host)
		return p.Name + " (" + how + ")", err
	}},
	{"disk-full", true, func(ctx context.Context, n *Nemesis) (string, error) {
		if len(n.c.Disks) == 0 {
			return "", errSkip
		}
		i := n.rng.Intn(len(n.c.Disks))
		return n.c.Brokers[i].Name, fill(filepath.Join(n.c.Disks[i], "chaos-fill"))
	}},
}

// Kinds lists the fault kinds' names.
func Kinds() []string {
	var out []string
	for _, f := range kinds {
		out = append(out, f.name)
	}
	return out
}

var errSkip = fmt.Errorf("fault not possible in this layout")

// Nemesis applies faults to a cluster.
type Nemesis struct {
	c     *Cluster
	tr    *Traffic // its acknowledgements tell when every partition takes writes again
	rng   *rand.Rand
	adm   *kadm.Client
	topic string
	hold  time.Duration // set by a fault that must last longer
	only  []string      // fault kinds to choose from (all if empty)
}

// FaultRecord is one fault of the run, for the report.
type FaultRecord struct {
	Name, Target string
	Majority     bool
	Start        time.Time
	Held         time.Duration
	// Healthy is the time from the heal until metadata showed every
	// partition with a leader and its full ISR and every partition had
	// taken an acknowledged write since the heal; -1 if not within the
	// bound. The next fault starts only after that (and the gap).
	Healthy time.Duration
	// Recovered is the time from the heal until every partition had
	// taken an acknowledged write (filled in from the history); -1 if
	// one took none before the next fault.
	Recovered time.Duration
	// Unavailable is the longest a partition of the main topic went
	// without an acknowledged write from the fault's start to its
	// recovery (filled in from the history).
	Unavailable time.Duration
	// WritersGap is Unavailable counting only the writers' writes, not
	// the prober's.
	WritersGap time.Duration
	Err        string
}

// step applies one random fault, holds it for hold (or longer if the
// fault needs it), heals everything, and waits for the cluster to recover.
func (n *Nemesis) step(ctx context.Context, hold time.Duration) FaultRecord {
	f := kinds[n.rng.Intn(len(kinds))]
	for (f.name == "disk-full" && len(n.c.Disks) == 0) || (len(n.only) > 0 && !slices.Contains(n.only, f.name)) {
		f = kinds[n.rng.Intn(len(kinds))]
	}
	n.hold = hold
	rec := FaultRecord{Name: f.name, Majority: f.majority, Start: time.Now()}
	target, err := f.apply(ctx, n)
	rec.Target = target
	if err != nil {
		rec.Err = err.Error()
	}
	sleep(ctx, n.hold)
	rec.Held = time.Since(rec.Start)
	if err := n.heal(ctx); err != nil && rec.Err == "" {
		rec.Err = "heal: " + err.Error()
	}
	rec.Healthy = n.awaitRecovery(ctx, 90*time.Second, rec.Start.Add(rec.Held))
	return rec
}

// heal undoes every fault: links restored, disks emptied, stopped
// processes resumed, dead ones restarted.
func (n *Nemesis) heal(ctx context.Context) error {
	err := n.c.Net.Heal(ctx)
	for _, d := range n.c.Disks {
		os.Remove(filepath.Join(d, "chaos-fill"))
	}
	if rerr := n.c.RestartDead(); rerr != nil {
		return rerr
	}
	return err
}

// awaitRecovery waits until every partition of the topic has taken an
// acknowledged write since healed and metadata shows each with a leader and
// as many ISR members as replicas; -1 after bound. Metadata alone is not
// enough: a leader may still shrink its ISR below min.insync.replicas just
// after the heal (its followers' fetches sent into the cut come back late),
// and the next fault would then begin with a partition already unavailable,
// its gap counted against that fault.
func (n *Nemesis) awaitRecovery(ctx context.Context, bound time.Duration, healed time.Time) time.Duration {
	start := time.Now()
	for time.Since(start) < bound && ctx.Err() == nil {
		if n.tr.AckedSince(healed) && n.healthy(ctx) {
			return time.Since(start)
		}
		sleep(ctx, 200*time.Millisecond)
	}
	return -1
}

func (n *Nemesis) healthy(ctx context.Context) bool {
	// Every broker is asked itself, on a connection of its own: a client
	// that picks one broker for metadata waits out its backoff on a
	// broker that just restarted, which measured seconds of the probe's
	// own making.
	for i := range n.c.Brokers {
		if !n.healthyAt(ctx, int32(i+1)) {
			return false
		}
	}
	return true
}

// healthyAt: broker id's metadata shows every broker and every partition
// of the topic with a leader and its full ISR.
func (n *Nemesis) healthyAt(ctx context.Context, id int32) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.c.Broker(id).Host.IP+":9092"), kgo.DialTimeout(time.Second),
		kgo.RequestRetries(0))
	if err != nil {
		return false
	}
	defer cl.Close()
	mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(n.topic)
	req.Topics = append(req.Topics, rt)
	// The seed broker answers: a request of a client that knows no other.
	resp, err := req.RequestWith(mctx, cl)
	if err != nil || len(resp.Brokers) != len(n.c.Brokers) || len(resp.Topics) != 1 {
		return false
	}
	t := resp.Topics[0]
	if t.ErrorCode != 0 || len(t.Partitions) == 0 {
		return false
	}
	for _, p := range t.Partitions {
		if p.ErrorCode != 0 || p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
			return false
		}
	}
	return true
}

func (n *Nemesis) anyBroker() *Proc { return n.c.Brokers[n.rng.Intn(len(n.c.Brokers))] }

// controller is the broker metadata names controller, else any broker.
func (n *Nemesis) controller(ctx context.Context) *Proc {
	mctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if md, err := n.adm.Metadata(mctx); err == nil {
		if p := n.c.Broker(md.Controller); p != nil {
			return p
		}
	}
	return n.anyBroker()
}

// leader is the leader of a random partition of the topic, else any broker.
func (n *Nemesis) leader(ctx context.Context) *Proc {
	mctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if md, err := n.adm.Metadata(mctx, n.topic); err == nil {
		if t, ok := md.Topics[n.topic]; ok && len(t.Partitions) > 0 {
			ps := t.Partitions.Sorted()
			if p := n.c.Broker(ps[n.rng.Intn(len(ps))].Leader); p != nil {
				return p
			}
		}
	}
	return n.anyBroker()
}

func (n *Nemesis) others(p *Proc) []*Proc {
	var out []*Proc
	for _, b := range n.c.Brokers {
		if b != p {
			out = append(out, b)
		}
	}
	return out
}

func (n *Nemesis) storesBut(s *Proc) []*Proc {
	var out []*Proc
	for _, m := range n.c.Stores {
		if m != s {
			out = append(out, m)
		}
	}
	return out
}

func (n *Nemesis) hosts(ps []*Proc) []*Host {
	out := make([]*Host, len(ps))
	for i, p := range ps {
		out[i] = p.Host
	}
	return out
}

func (n *Nemesis) cutAll(ctx context.Context, side, other []*Host) error {
	for _, a := range side {
		for _, b := range other {
			if err := n.c.Net.Cut(ctx, a, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill writes zeros to path until the file system is full.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			return nil // ENOSPC: full
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

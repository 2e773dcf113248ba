package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Options size a campaign.
type Options struct {
	Bin  string // samsa binary
	Dir  string // data and logs (kept for inspection)
	Seed int64
	// Faults to apply, each held HoldMin..HoldMax, with Gap between.
	Faults           int
	HoldMin, HoldMax time.Duration
	Gap              time.Duration
	Brokers          int
	Partitions       int32
	Rate             int           // records/s per writer
	ProbeEvery       time.Duration // Traffic.ProbeEvery
	Idempotent       int           // idempotent writers
	Plain            int           // plain acks=all writers
	SessionTimeoutMs int
	DiskMB           int // tmpfs log dirs of this size (0: the Dir's disk)
	NetID            int // 10.77.NetID.0/24 and namespace names
	Out              io.Writer
	// Only restricts the faults to these kinds (Kinds lists them).
	Only []string
	// BrokerConfig is given to every broker as --override key=value, over
	// the campaign's own settings.
	BrokerConfig []string
}

// Report is a campaign's outcome.
type Report struct {
	Seed         int64
	ProbeEvery   time.Duration
	Faults       []FaultRecord
	Counts       Counts
	Replicas     []string // replica differences below the high watermark
	Outside      []string // copies not compared: on brokers outside their partition's ISR
	SplitBrain   []string // controller epochs claimed by two brokers (state-change logs)
	Fencing      []string // split brain and fencing failures in the store's history
	Epochs       []string // controller epochs and their owners, from the store
	StoreEvents  int      // changes in the store's history
	Topics       []string // deleted topics not gone, reassignments not done, ISRs short of their replicas
	Crashes      []string // panics and data races in the processes' logs
	Exits        []string // exits the campaign did not cause
	OverGoal     []string // majority faults with a partition unavailable past session + 1 s
	ClientErrors map[string]int
	// Leaderless names the partitions (topic-N) still without a leader
	// when reading back gave up, so that their log lines can be shown.
	Leaderless []string
}

// Violations counts what makes the run fail.
func (r Report) Violations() int {
	return r.Counts.Violations() + len(r.Replicas) + len(r.SplitBrain) + len(r.Fencing) + len(r.Topics) + len(r.Crashes)
}

const (
	topic           = "chaos"
	movesTopic      = "chaos-moves"
	movesPartitions = 3
)

// Run sets up the cluster, runs the traffic through the faults, heals,
// checks and reports. The cluster is torn down before it returns.
func Run(ctx context.Context, o Options) (Report, error) {
	rep := Report{Seed: o.Seed, ProbeEvery: o.ProbeEvery}
	out := o.Out
	fmt.Fprintf(out, "chaos: seed %d, %d faults, %d brokers, %d partitions, data in %s\n", o.Seed, o.Faults, o.Brokers, o.Partitions, o.Dir)
	c, err := StartCluster(ctx, Layout{Bin: o.Bin, Dir: o.Dir, Brokers: o.Brokers, SessionTimeoutMs: o.SessionTimeoutMs, DiskMB: o.DiskMB,
		BrokerConfig: o.BrokerConfig}, o.NetID)
	if err != nil {
		return rep, err
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DialTimeout(3*time.Second))
	if err != nil {
		return rep, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if err := createTopic(ctx, adm, topic, o.Partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}); err != nil {
		return rep, err
	}
	if err := CreateMoves(ctx, adm, movesTopic, movesPartitions); err != nil {
		return rep, err
	}
	tr := &Traffic{Seeds: c.Bootstrap(), Topic: topic, Partitions: o.Partitions, Group: "chaos-group", Rate: o.Rate,
		ProbeEvery: o.ProbeEvery}
	for p := int32(0); p < movesPartitions; p++ {
		tr.Extra = append(tr.Extra, Partition{movesTopic, p})
	}
	ad := &Admin{Seeds: c.Bootstrap(), Brokers: o.Brokers, Moves: movesTopic, MovesPartitions: movesPartitions,
		Every: 4 * time.Second, Seed: o.Seed}
	tctx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	if err := tr.Run(tctx, o.Idempotent, o.Plain); err != nil {
		return rep, err
	}
	if err := ad.Run(tctx); err != nil {
		return rep, err
	}
	sleep(ctx, 3*time.Second)
	rng := rand.New(rand.NewSource(o.Seed))
	for _, k := range o.Only {
		if !slices.Contains(Kinds(), k) {
			return rep, fmt.Errorf("unknown fault kind %q (kinds: %s)", k, strings.Join(Kinds(), ", "))
		}
	}
	nem := &Nemesis{c: c, tr: tr, rng: rng, adm: adm, topic: topic, only: o.Only}
	for i := 0; i < o.Faults && ctx.Err() == nil; i++ {
		hold := o.HoldMin + time.Duration(rng.Int63n(int64(o.HoldMax-o.HoldMin)+1))
		f := nem.step(ctx, hold)
		rep.Faults = append(rep.Faults, f)
		fmt.Fprintf(out, "chaos: %3d %-27s %-44s held %5.1fs healthy after %s %s\n", i+1, f.Name, f.Target,
			f.Held.Seconds(), seconds(f.Healthy), f.Err)
		sleep(ctx, o.Gap)
	}
	// Quiet period: writes go on against a healed cluster, then stop.
	sleep(ctx, 5*time.Second)
	stopTraffic()
	tr.Wait()
	ad.Wait()
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	final := map[Partition][]Read{}
	for _, t := range []string{topic, movesTopic} {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		f, waited, err := ReadAll(rctx, c.Bootstrap(), t)
		cancel()
		if waited >= time.Second {
			fmt.Fprintf(out, "chaos: reading %s back waited %v for a leader of every partition\n", t, waited.Round(100*time.Millisecond))
		}
		if err != nil {
			rep.Leaderless = describeLeaderless(ctx, adm, t, out)
			return rep, err
		}
		maps.Copy(final, f)
	}
	h := tr.History(final)
	rep.Counts = Check(h)
	fillRecovery(rep.Faults, h.Writes, o.Partitions)
	rep.ClientErrors = tr.Errors()
	maps.Copy(rep.ClientErrors, ad.Errors())
	var logs []string
	for _, b := range c.Brokers {
		logs = append(logs, b.log)
	}
	rep.OverGoal = overGoal(rep.Faults, h.Writes, o.SessionTimeoutMs, logs)
	hw := map[Partition]int64{}
	for p, reads := range final {
		if len(reads) > 0 {
			hw[p] = reads[len(reads)-1].Offset + 1
		}
	}
	dirs := map[string]string{}
	for _, b := range c.Brokers {
		dirs[b.Name] = filepath.Join(c.Dir, b.Name, "data")
	}
	if err := ad.Finish(ctx, adm); err != nil {
		rep.Topics = append(rep.Topics, err.Error())
	}
	rep.Topics = append(rep.Topics, ad.Check(ctx, cl, c, dirs, 60*time.Second)...)
	isrFrom := time.Now()
	isr, short, err := inSyncReplicas(ctx, adm, 60*time.Second, topic, movesTopic)
	if err != nil {
		fmt.Fprintf(out, "chaos: no ISRs to compare replicas by (%v): comparing every copy\n", err)
	} else if waited := time.Since(isrFrom); waited >= time.Second {
		fmt.Fprintf(out, "chaos: waited %v for every ISR to be its whole replica set (%d still short)\n", waited.Round(100*time.Millisecond), len(short))
	}
	rep.Topics = append(rep.Topics, short...)
	for _, b := range c.Brokers {
		b.Terminate(30 * time.Second)
	}
	rep.Replicas, rep.Outside = CompareReplicas(dirs, hw, isr)
	for _, p := range append(append([]*Proc{}, c.Stores...), c.Brokers...) {
		rep.Exits = append(rep.Exits, p.Exits()...)
	}
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	events, err := readStoreHistory(hctx, c)
	cancel()
	if err != nil {
		return rep, fmt.Errorf("reading the store's history: %w", err)
	}
	rep.StoreEvents = len(events)
	rep.Fencing, rep.Epochs = CheckStoreHistory(events)
	rep.Topics = append(rep.Topics, StoreLeftovers(events)...)
	rep.SplitBrain, rep.Crashes, err = scanLogs(c)
	return rep, err
}

// describeLeaderless prints, for a topic that reading back gave up on,
// every partition the cluster's metadata shows without a leader, with its
// replicas and ISR, and returns their names.
func describeLeaderless(ctx context.Context, adm *kadm.Client, topic string, out io.Writer) []string {
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	md, err := adm.Metadata(mctx, topic)
	cancel()
	if err != nil {
		fmt.Fprintf(out, "chaos: no metadata for %s: %v\n", topic, err)
		return nil
	}
	var names []string
	for _, t := range md.Topics.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			if p.Leader >= 0 {
				continue
			}
			name := fmt.Sprintf("%s-%d", t.Topic, p.Partition)
			names = append(names, name)
			fmt.Fprintf(out, "chaos: %s has no leader: replicas %v, ISR %v, leader epoch %d, error %v\n",
				name, p.Replicas, p.ISR, p.LeaderEpoch, p.Err)
		}
	}
	return names
}

// inSyncReplicas waits up to bound for every partition of topics to have
// its whole replica set in sync, and returns each partition's ISR as the
// brokers' names (broker id N is bN) and the partitions whose ISR was
// still short of their replicas at the bound.
func inSyncReplicas(ctx context.Context, adm *kadm.Client, bound time.Duration, topics ...string) (map[Partition][]string, []string, error) {
	deadline := time.Now().Add(bound)
	for {
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		md, err := adm.Metadata(mctx, topics...)
		cancel()
		isr, short := map[Partition][]string{}, []string(nil)
		for _, t := range md.Topics.Sorted() {
			if t.Err != nil && err == nil {
				err = fmt.Errorf("%s: %w", t.Topic, t.Err)
			}
			for _, p := range t.Partitions.Sorted() {
				var names []string
				for _, id := range p.ISR {
					names = append(names, fmt.Sprintf("b%d", id))
				}
				isr[Partition{t.Topic, p.Partition}] = names
				if len(p.ISR) < len(p.Replicas) {
					short = append(short, fmt.Sprintf("%s-%d: ISR %v of replicas %v", t.Topic, p.Partition, p.ISR, p.Replicas))
				}
			}
		}
		if (err == nil && len(short) == 0) || time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return nil, nil, err
			}
			return isr, short, nil
		}
		sleep(ctx, time.Second)
	}
}

func seconds(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// fillRecovery sets each fault's Recovered from the acknowledgements
// between its heal and the next fault.
func fillRecovery(faults []FaultRecord, writes []Write, partitions int32) {
	var ps []Partition
	for p := int32(0); p < partitions; p++ {
		ps = append(ps, Partition{topic, p})
	}
	for i := range faults {
		healed := faults[i].Start.Add(faults[i].Held)
		until := time.Now()
		if i+1 < len(faults) {
			until = faults[i+1].Start
		}
		if d, ok := FirstAcks(writes, ps, healed, until); ok {
			faults[i].Recovered = d
		} else {
			faults[i].Recovered = -1
		}
	}
}

func createTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, rf int16, cfg map[string]*string) error {
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := adm.CreateTopic(cctx, partitions, rf, cfg, topic)
		cancel()
		if err == nil && (r.Err == nil || errors.Is(r.Err, errTopicExists)) {
			return nil
		}
		last = errors.Join(err, r.Err)
		sleep(ctx, time.Second)
	}
	return fmt.Errorf("creating %s: %w", topic, last)
}

// overGoal lists the majority faults during which (fault start to
// recovery) some partition went longer than the session timeout + 1 s
// without an acknowledged write.
// It also sets every fault's Unavailable.
// logs are the brokers' log files, for the time of the first leader
// election after each fault over the goal.
func overGoal(faults []FaultRecord, writes []Write, sessionMs int, logs []string) []string {
	limit := time.Duration(sessionMs)*time.Millisecond + time.Second
	// The goal holds for the main topic (RF 3, min.insync.replicas 2);
	// the moves topic has 2 replicas, no majority survives losing one.
	var main []Write
	for _, w := range writes {
		if w.Partition.Topic == topic {
			main = append(main, w)
		}
	}
	var out []string
	for i := range faults {
		f := &faults[i]
		end := f.Start.Add(f.Held)
		if f.Recovered > 0 {
			end = end.Add(f.Recovered)
		}
		if f.Healthy > 0 && f.Healthy > f.Recovered {
			end = f.Start.Add(f.Held + f.Healthy)
		}
		gap, p, since := LongestGap(main, f.Start, end)
		f.Unavailable = gap
		f.WritersGap, _, _ = LongestGap(slices.DeleteFunc(slices.Clone(main), func(w Write) bool { return w.Probe }), f.Start, end)
		if f.Majority && gap > limit {
			// The fault's number and UTC times find it in the brokers' logs.
			line := fmt.Sprintf("%d %s %s at %s: %s without an acknowledged write for %.1fs from %s", i+1, f.Name,
				f.Target, f.Start.UTC().Format(stamp), p, gap.Seconds(), since.UTC().Format(stamp))
			if since.Equal(f.Start) {
				// The gap may have begun before the fault (a previous
				// fault's recovery still under way when this one began).
				if last, ok := lastAck(main, p, f.Start); ok {
					line += fmt.Sprintf(" (its last acknowledged write before the fault: %s)", last.UTC().Format(stamp))
				}
			}
			if at, ok := firstElection(logs, f.Start); ok {
				line += fmt.Sprintf(" (the controller's first election after the fault: %.1fs)", at.Sub(f.Start).Seconds())
			}
			out = append(out, line)
		}
	}
	return out
}

const stamp = "15:04:05.000"

// lastAck is the time of p's last acknowledged write before t.
func lastAck(writes []Write, p Partition, t time.Time) (time.Time, bool) {
	var last time.Time
	for _, w := range writes {
		if w.Acked && w.Partition == p && w.At.Before(t) && w.At.After(last) {
			last = w.At
		}
	}
	return last, !last.IsZero()
}

func readStoreHistory(ctx context.Context, c *Cluster) ([]StoreEvent, error) {
	s, err := c.ConnectStore()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return StoreHistory(ctx, s)
}

var electedLeaders = regexp.MustCompile(`(?m)^time=(\S+) .*msg="elected leaders"`)

// firstElection is the time of the first "elected leaders" line at or
// after t in any of the logs.
func firstElection(logs []string, t time.Time) (time.Time, bool) {
	var first time.Time
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, m := range electedLeaders.FindAllSubmatch(data, -1) {
			at, err := time.Parse(time.RFC3339Nano, string(m[1]))
			if err == nil && !at.Before(t) && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
	}
	return first, !first.IsZero()
}

var becameController = regexp.MustCompile(`msg="became controller" epoch=(\d+)`)

// scanLogs reads every process's log: controller epochs claimed by more
// than one broker, and panics or data races.
func scanLogs(c *Cluster) (split, crashes []string, err error) {
	claims := map[string][]string{}
	for _, p := range append(append([]*Proc{}, c.Stores...), c.Brokers...) {
		data, rerr := os.ReadFile(p.log)
		if rerr != nil {
			return nil, nil, rerr
		}
		text := string(data)
		for _, m := range becameController.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(claims[m[1]], p.Name) {
				claims[m[1]] = append(claims[m[1]], p.Name)
			}
		}
		for _, marker := range []string{"panic:", "fatal error:", "WARNING: DATA RACE"} {
			if i := strings.Index(text, marker); i >= 0 {
				crashes = append(crashes, fmt.Sprintf("%s: %s", p.Name, firstLines(text[i:], 3)))
			}
		}
	}
	for epoch, who := range claims {
		if len(who) > 1 {
			split = append(split, fmt.Sprintf("controller epoch %s claimed by %s", epoch, strings.Join(who, ", ")))
		}
	}
	sort.Strings(split)
	return split, crashes, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// Print writes the report.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "\nchaos report (seed %d)\n", r.Seed)
	byKind, unavail, writers := map[string][]time.Duration{}, map[string][]time.Duration{}, map[string][]time.Duration{}
	for _, f := range r.Faults {
		byKind[f.Name] = append(byKind[f.Name], f.Recovered)
		unavail[f.Name] = append(unavail[f.Name], f.Unavailable)
		writers[f.Name] = append(writers[f.Name], f.WritersGap)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "unavailable: the longest a partition of the RF 3 topic went without an acknowledged write, from the fault to its recovery\n")
	fmt.Fprintf(w, "writers' gap: the same counting the writers' acknowledgements only (a client waiting 3 + 1 s on a request; the prober tries every partition's leader afresh every %v)\n", r.ProbeEvery)
	fmt.Fprintf(w, "recovery: from the heal to an acknowledged write on every partition\n")
	fmt.Fprintf(w, "%-27s %5s %16s %16s %17s %14s %14s\n", "fault", "count", "unavailable p50", "unavailable max", "writers' gap max", "recovery p50", "recovery max")
	for _, k := range kinds {
		p50, mx, never := recoveryStats(byKind[k])
		u50, umx, _ := recoveryStats(unavail[k])
		_, wmx, _ := recoveryStats(writers[k])
		fmt.Fprintf(w, "%-27s %5d %15.1fs %15.1fs %16.1fs %13.1fs %13.1fs", k, len(byKind[k]), u50.Seconds(), umx.Seconds(), wmx.Seconds(), p50.Seconds(), mx.Seconds())
		if never > 0 {
			fmt.Fprintf(w, "  (%d: a partition took no write before the next fault)", never)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, r.Counts.String())
	section(w, "replicas differing below the high watermark", r.Replicas)
	section(w, "copies outside their partition's ISR, not compared (out of sync, or removed by a reassignment while down)", r.Outside)
	section(w, "controller epochs claimed twice in the state-change logs (split brain)", r.SplitBrain)
	fmt.Fprintf(w, "store history: %d changes, %d controller epochs (epoch:owner %s)\n", r.StoreEvents, len(r.Epochs), strings.Join(r.Epochs, " "))
	section(w, "split brain or fencing failures in the store's history", r.Fencing)
	section(w, "deleted topics not gone everywhere, reassignments not done, ISRs short of their replicas after a minute", r.Topics)
	section(w, "panics and data races", r.Crashes)
	section(w, "exits the campaign did not cause (restarted)", r.Exits)
	section(w, "majority faults over the availability goal (session timeout + 1 s)", r.OverGoal)
	errs := make([]string, 0, len(r.ClientErrors))
	for k, v := range r.ClientErrors {
		errs = append(errs, fmt.Sprintf("%6d %s", v, k))
	}
	sort.Strings(errs)
	section(w, "client errors (expected under faults)", errs)
	fmt.Fprintf(w, "violations: %d\n", r.Violations())
}

func recoveryStats(ds []time.Duration) (p50, mx time.Duration, never int) {
	var ok []time.Duration
	for _, d := range ds {
		if d < 0 {
			never++
			continue
		}
		ok = append(ok, d)
	}
	if len(ok) == 0 {
		return 0, 0, never
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i] < ok[j] })
	return ok[len(ok)/2], ok[len(ok)-1], never
}

func section(w io.Writer, title string, lines []string) {
	fmt.Fprintf(w, "%s: %d\n", title, len(lines))
	for i, l := range lines {
		if i == 20 {
			fmt.Fprintf(w, "  … %d more\n", len(lines)-20)
			break
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}

var errTopicExists = kerr.TopicAlreadyExists

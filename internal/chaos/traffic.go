package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Traffic runs the campaign's clients and records their history.
type Traffic struct {
	Seeds      []string
	Topic      string
	Partitions int32
	Group      string
	// Extra are partitions of other topics the writers write to as well
	// (the moves topic), round-robin with the topic's.
	Extra []Partition
	// Rate is records per second per writer.
	Rate int
	// ProbeEvery is how often the prober (probe.go) tries a write to
	// every partition of Topic; 0: no prober.
	ProbeEvery time.Duration

	mu        sync.Mutex
	writes    []Write
	latestAck []time.Time // per partition of Topic: its latest acknowledged write
	live      []Read
	commits   map[Partition][]int64
	errs      map[string]int // client errors by kind, for the report
	wg        sync.WaitGroup
}

// record adds w, answered, to the history; t.mu is held.
func (t *Traffic) record(w Write) {
	t.writes = append(t.writes, w)
	if !w.Acked || w.Partition.Topic != t.Topic || w.Partition.Partition < 0 || w.Partition.Partition >= t.Partitions {
		return
	}
	if t.latestAck == nil {
		t.latestAck = make([]time.Time, t.Partitions)
	}
	if at := &t.latestAck[w.Partition.Partition]; w.At.After(*at) {
		*at = w.At
	}
}

// AckedSince reports whether every partition of Topic has taken an
// acknowledged write (a writer's or the prober's) answered after since.
func (t *Traffic) AckedSince(since time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.latestAck) == 0 {
		return t.Partitions == 0
	}
	for _, at := range t.latestAck {
		if !at.After(since) {
			return false
		}
	}
	return true
}

func (t *Traffic) opts(extra ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.SeedBrokers(t.Seeds...),
		kgo.DialTimeout(3 * time.Second),
		kgo.RequestTimeoutOverhead(5 * time.Second),
		kgo.RetryTimeout(30 * time.Second),
		kgo.MetadataMaxAge(5 * time.Second),
		// A refresh after an error may follow the last one by 500 ms, as
		// the Java client's retry.backoff.ms lets it (kgo's default waits
		// 5 s, which would dominate every failover the campaign measures).
		kgo.MetadataMinAge(500 * time.Millisecond),
		kgo.RetryBackoffFn(javaBackoff),
	}, extra...)
}

// javaBackoff is the Java client's backoff between retries (KIP-580,
// retry.backoff.ms=100 and retry.backoff.max.ms=1000, their defaults):
// 100 ms doubling per try up to 1 s, ±20%. kgo's own grows to 2.5 s,
// which after a few failed tries against a frozen leader would delay
// the first try at its successor by as much.
func javaBackoff(tries int) time.Duration {
	d := 100 * time.Millisecond << min(max(tries-1, 0), 4)
	d = min(d, time.Second)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Run starts writers (idempotent ones first, then plain ones), a consumer
// reading everything and a group member committing; they stop when ctx
// ends, and Wait returns when they have.
func (t *Traffic) Run(ctx context.Context, idempotent, plain int) error {
	t.commits = map[Partition][]int64{}
	t.errs = map[string]int{}
	for i := 0; i < idempotent+plain; i++ {
		cl, err := kgo.NewClient(t.writerOpts(i < idempotent)...)
		if err != nil {
			return err
		}
		t.wg.Add(1)
		go t.write(ctx, cl, i+1, i < idempotent)
	}
	if t.ProbeEvery > 0 {
		t.wg.Add(1)
		go t.probe(ctx, idempotent+plain+1)
	}
	for _, f := range []func(context.Context) error{t.consume, t.group} {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Wait waits for every client to stop.
func (t *Traffic) Wait() { t.wg.Wait() }

func (t *Traffic) writerOpts(idempotent bool) []kgo.Opt {
	o := t.opts(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(40*time.Second),
		// A produce request to a frozen leader (SIGSTOP) is given up after
		// 3 + 1 s, not 10 + 5: the campaign measures how long a partition
		// is unavailable, not how long a client waits on a dead socket.
		kgo.ProduceRequestTimeout(3*time.Second),
		kgo.RequestTimeoutOverhead(time.Second),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if !idempotent {
		// One request in flight keeps a plain producer's retries in order.
		o = append(o, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(1))
	}
	return o
}

// produce sends w and records its outcome; done is called first.
func (t *Traffic) produce(cl *kgo.Client, w Write, done func()) {
	r := &kgo.Record{Topic: w.Partition.Topic, Partition: w.Partition.Partition, Value: []byte(w.Value())}
	cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
		done()
		w.Acked, w.Offset, w.At = err == nil, r.Offset, time.Now()
		t.mu.Lock()
		t.record(w)
		if err != nil {
			t.errs["produce: "+errKind(err)]++
		}
		t.mu.Unlock()
	})
}

// write produces Rate records a second, each to the next partition, until
// ctx ends; then it waits (bounded) for the outstanding ones.
func (t *Traffic) write(ctx context.Context, cl *kgo.Client, writer int, idempotent bool) {
	defer t.wg.Done()
	tick := time.NewTicker(time.Second / time.Duration(max(t.Rate, 1)))
	defer tick.Stop()
	inflight := make(chan struct{}, 200)
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			cl.Flush(fctx)
			cancel()
			cl.Close() // fails what is left, calling each promise
			return
		case <-tick.C:
		}
		select {
		case inflight <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		p := Partition{t.Topic, int32(seq % (int(t.Partitions) + len(t.Extra)))}
		if p.Partition >= t.Partitions {
			p = t.Extra[p.Partition-t.Partitions]
		}
		t.produce(cl, Write{Writer: writer, Seq: seq, Idempotent: idempotent, Partition: p}, func() { <-inflight })
	}
}

// consume reads every partition from the start, recording what it sees.
func (t *Traffic) consume(ctx context.Context) error {
	cl, err := kgo.NewClient(t.opts(kgo.ConsumeTopics(t.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return err
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cl.Close()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			t.recordErrs("consume", fs)
			var reads []Read
			fs.EachRecord(func(r *kgo.Record) {
				reads = append(reads, Read{Partition{r.Topic, r.Partition}, r.Offset, string(r.Value)})
			})
			t.mu.Lock()
			t.live = append(t.live, reads...)
			t.mu.Unlock()
		}
	}()
	return nil
}

// group is one member of a consumer group that commits what it consumed
// every second and records each acknowledged commit.
func (t *Traffic) group(ctx context.Context) error {
	cl, err := kgo.NewClient(t.opts(kgo.ConsumerGroup(t.Group), kgo.ConsumeTopics(t.Topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(10*time.Second), kgo.FetchMaxWait(500*time.Millisecond))...)
	if err != nil {
		return err
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cl.Close()
		last := time.Now()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			t.recordErrs("group", fs)
			if time.Since(last) >= time.Second {
				last = time.Now()
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				cl.CommitOffsetsSync(cctx, cl.UncommittedOffsets(), t.onCommit)
				cancel()
			}
		}
	}()
	return nil
}

func (t *Traffic) onCommit(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
	if err != nil || resp == nil {
		return
	}
	sent := map[Partition]int64{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			sent[Partition{rt.Topic, rp.Partition}] = rp.Offset
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			p := Partition{rt.Topic, rp.Partition}
			if off, ok := sent[p]; ok && rp.ErrorCode == 0 {
				t.commits[p] = append(t.commits[p], off)
			}
		}
	}
}

func (t *Traffic) recordErrs(who string, fs kgo.Fetches) {
	errs := fs.Errors()
	if len(errs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range errs {
		t.errs[who+": "+errKind(e.Err)]++
	}
}

// errKind shortens an error to its kind for the report's tally.
func errKind(err error) string {
	s := err.Error()
	if i := strings.IndexAny(s, ":"); i > 0 && i < 60 {
		s = s[:i]
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// History returns what the clients did; final is the logs read back.
func (t *Traffic) History(final map[Partition][]Read) History {
	t.mu.Lock()
	defer t.mu.Unlock()
	return History{Writes: t.writes, Live: t.live, Final: final, Commits: t.commits}
}

// Errors is the clients' error tally.
func (t *Traffic) Errors() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.errs))
	for k, v := range t.errs {
		out[k] = v
	}
	return out
}

// ReadAll reads every partition of topic from its log start offset to its
// high watermark with a new client. Until every partition has a leader to
// answer ListOffsets (an election may still run after the last heal), it
// asks again, as a client would, until ctx ends; waited is how long that
// took.
func ReadAll(ctx context.Context, seeds []string, topic string) (_ map[Partition][]Read, waited time.Duration, _ error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DialTimeout(3*time.Second))
	if err != nil {
		return nil, 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	asked := time.Now()
	var start, end kadm.ListedOffsets
	for {
		if start, end, err = listOffsets(ctx, adm, topic); err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, time.Since(asked), fmt.Errorf("%w (still so %v after the first try)", err, time.Since(asked).Round(time.Second))
		}
		sleep(ctx, 250*time.Millisecond)
	}
	waited = time.Since(asked)
	from := map[string]map[int32]kgo.Offset{topic: {}}
	want := map[Partition]int64{}
	end.Each(func(o kadm.ListedOffset) {
		s, _ := start.Lookup(o.Topic, o.Partition)
		from[topic][o.Partition] = kgo.NewOffset().At(s.Offset)
		if o.Offset > s.Offset {
			want[Partition{o.Topic, o.Partition}] = o.Offset
		}
	})
	out := map[Partition][]Read{}
	for p := range from[topic] {
		out[Partition{topic, p}] = nil
	}
	cl.AddConsumePartitions(from)
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, waited, fmt.Errorf("reading back: %d partitions short of their end: %v", len(want), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			p := Partition{r.Topic, r.Partition}
			end, ok := want[p]
			if !ok || r.Offset >= end {
				return
			}
			out[p] = append(out[p], Read{p, r.Offset, string(r.Value)})
			if r.Offset+1 >= end {
				delete(want, p)
			}
		})
	}
	return out, waited, nil
}

// listOffsets lists topic's start and end offsets, every partition's or an
// error.
func listOffsets(ctx context.Context, adm *kadm.Client, topic string) (start, end kadm.ListedOffsets, err error) {
	if start, err = adm.ListStartOffsets(ctx, topic); err != nil {
		return nil, nil, err
	}
	if end, err = adm.ListEndOffsets(ctx, topic); err != nil {
		return nil, nil, err
	}
	var errs []string
	for _, l := range []kadm.ListedOffsets{start, end} {
		l.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				errs = append(errs, fmt.Sprintf("%s-%d: %v", o.Topic, o.Partition, o.Err))
			}
		})
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("list offsets: %s", strings.Join(errs, "; "))
	}
	return start, end, nil
}

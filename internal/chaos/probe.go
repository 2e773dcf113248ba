package chaos

// The prober measures when a partition takes writes, apart from how long a
// client takes to notice that it should stop waiting on a dead or frozen
// leader. Every ProbeEvery it makes, for every partition of the topic, one
// independent attempt: a new connection to the partition's leader as the
// freshest metadata names it (the answer with the highest leader epoch
// among the brokers that answered the last round within probeMetaTimeout),
// one record, acks=all, given up after probeTimeout. Nothing is retried and
// no attempt waits for another, so the first attempt that succeeds after a
// fault is at most ProbeEvery after the cluster can take the write. Its
// records are writes of the history like the writers' (checked for loss
// and position; attempts are independent, so not for order).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/wire"
)

const (
	probeMetaTimeout = 300 * time.Millisecond
	probeTimeout     = time.Second
	// probeInflight bounds the attempts of one partition awaiting their
	// answers (a frozen leader holds each for probeTimeout).
	probeInflight = 20
)

// probeLeader is where a partition's writes go, as the metadata of some
// broker said.
type probeLeader struct {
	epoch int32
	addr  string
}

type prober struct {
	t      *Traffic
	writer int

	mu      sync.Mutex
	leaders map[int32]probeLeader
}

// probe runs the prober until ctx ends.
func (t *Traffic) probe(ctx context.Context, writer int) {
	defer t.wg.Done()
	p := &prober{t: t, writer: writer, leaders: map[int32]probeLeader{}}
	inflight := make([]chan struct{}, t.Partitions)
	for i := range inflight {
		inflight[i] = make(chan struct{}, probeInflight)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(t.ProbeEvery)
	defer tick.Stop()
	for seq := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.refresh(ctx) }()
		for part := int32(0); part < t.Partitions; part++ {
			p.mu.Lock()
			l, ok := p.leaders[part]
			p.mu.Unlock()
			if !ok {
				continue
			}
			select {
			case inflight[part] <- struct{}{}:
			default:
				continue
			}
			w := Write{Writer: writer, Seq: seq, Probe: true, Partition: Partition{t.Topic, part}}
			seq++
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.attempt(ctx, w, l.addr)
				<-inflight[part]
			}()
		}
	}
}

// refresh asks every seed broker for the topic's metadata at once and
// keeps, per partition, the leader of the highest epoch answered.
func (p *prober) refresh(ctx context.Context) {
	var wg sync.WaitGroup
	for _, seed := range p.t.Seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 7
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(p.t.Topic)
			req.Topics = append(req.Topics, rt)
			resp := req.ResponseKind().(*kmsg.MetadataResponse)
			if roundTrip(ctx, seed, req, resp, probeMetaTimeout) != nil {
				return
			}
			addrs := map[int32]string{}
			for _, b := range resp.Brokers {
				addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, t := range resp.Topics {
				for _, part := range t.Partitions {
					addr, ok := addrs[part.Leader]
					if part.ErrorCode != 0 || !ok {
						continue
					}
					if cur, ok := p.leaders[part.Partition]; !ok || part.LeaderEpoch > cur.epoch {
						p.leaders[part.Partition] = probeLeader{part.LeaderEpoch, addr}
					}
				}
			}
		}()
	}
	wg.Wait()
}

// attempt writes w's record to the leader at addr, once, and records the
// outcome.
func (p *prober) attempt(ctx context.Context, w Write, addr string) {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 8
	req.Acks = -1
	req.TimeoutMillis = int32(probeTimeout / time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = w.Partition.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = w.Partition.Partition
	rp.Records = record.Build(time.Now().UnixMilli(), []record.KV{{Value: []byte(w.Value())}})
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	err := roundTrip(ctx, addr, req, resp, probeTimeout)
	if err == nil {
		err = fmt.Errorf("no answer for the partition")
		if len(resp.Topics) == 1 && len(resp.Topics[0].Partitions) == 1 {
			rp := resp.Topics[0].Partitions[0]
			err = kerr.ErrorForCode(rp.ErrorCode)
			w.Offset = rp.BaseOffset
		}
	}
	w.Acked, w.At = err == nil, time.Now()
	p.t.mu.Lock()
	p.t.record(w)
	if err != nil && ctx.Err() == nil {
		kind := errKind(err)
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			kind = fmt.Sprintf("no answer within %v", probeTimeout)
		}
		p.t.errs["probe: "+kind]++
	}
	p.t.mu.Unlock()
}

// roundTrip sends req on a new connection to addr and reads the answer,
// all within timeout.
func roundTrip(ctx context.Context, addr string, req kmsg.Request, resp kmsg.Response, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := wire.Dial(ctx, addr, "samsa-chaos-prober", timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.RoundTrip(req, resp, timeout)
}

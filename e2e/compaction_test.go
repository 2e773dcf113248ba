package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCompactionAcrossKill9 (issue 17): a samsa process with a 20 ms
// cleaner backoff compacts a cleanup.policy=compact topic of 200-byte
// segments while franz-go writes 10 keys; the process is SIGKILLed
// mid-stream (cleaning passes run all along, so often mid-pass) and
// restarted: a consumer reads every key's latest acknowledged value, each
// record once with increasing offsets, and, after more writes, fewer
// records than were produced.
func TestCompactionAcrossKill9(t *testing.T) {
	data := t.TempDir()
	port := freePort(t)
	extra := []string{"log.cleaner.backoff.ms=20"}
	p := startServer(t, data, port, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := compactClient(t, p.addr)
	cfgs := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("200"),
		"segment.ms": kadm.StringPtr("50")}
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, cfgs, "compacted"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	want := map[string]string{}
	produced := 0
	produce := func(cl *kgo.Client, n int) {
		for range n {
			k, v := fmt.Sprintf("key-%d", produced%10), fmt.Sprintf("value-%d", produced)
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "compacted", Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want[k] = v
			produced++
		}
	}
	produce(cl, 300)
	p.kill()
	cl.Close()

	p = startServer(t, data, port, extra...)
	cl = compactClient(t, p.addr)
	for { // the restarted broker serves once its previous registration expired
		got, n, ok := consumeLatest(t, ctx, p.addr, "compacted")
		if ok && !maps.Equal(got, want) {
			t.Fatalf("after kill -9: latest %v (%d records), want %v", got, n, want)
		}
		if ok {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("restarted broker never served")
		}
		time.Sleep(100 * time.Millisecond)
	}
	produce(cl, 100)
	for {
		got, n, _ := consumeLatest(t, ctx, p.addr, "compacted")
		if maps.Equal(got, want) && n < produced/2 {
			t.Logf("%d records of %d produced", n, produced)
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("not compacted: %d records of %d, latest %v", n, produced, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func compactClient(t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consumeLatest reads partition 0 of topic up to its end, checking offsets
// increase, and returns the latest value per key and the records read; ok
// is false if the broker does not answer ListOffsets yet.
func consumeLatest(t *testing.T, ctx context.Context, addr, topic string) (map[string]string, int, bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
	defer lcancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(lctx, topic)
	if err != nil || ends.Error() != nil {
		return nil, 0, false
	}
	end, _ := ends.Lookup(topic, 0)
	latest, n, last := map[string]string{}, 0, int64(-1)
	for last < end.Offset-1 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if r.Offset <= last {
				t.Fatalf("offset %d after %d", r.Offset, last)
			}
			latest[string(r.Key)] = string(r.Value)
			n++
			last = r.Offset
		})
	}
	return latest, n, true
}

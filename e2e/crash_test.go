package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type acked struct {
	partition int32
	offset    int64
	value     string
}

// TestKill9DuringProduce SIGKILLs the broker in the middle of an acks=1
// produce stream, tears the tail of a segment as a torn write would, restarts
// it and checks that every acknowledged record is there, at its offset, and
// that nothing past the torn tail is served.
func TestKill9DuringProduce(t *testing.T) {
	data := t.TempDir()
	port := freePort(t)
	p := startServer(t, data, port)

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DefaultProduceTopic("crash"),
		kgo.RecordRetries(0), kgo.ProduceRequestTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, nil, "crash"); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var acks []acked
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("record-%08d-%s", i, string(make([]byte, 200)))
			cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				if err == nil {
					mu.Lock()
					acks = append(acks, acked{r.Partition, r.Offset, string(r.Value)})
					mu.Unlock()
				}
			})
		}
	}()
	for {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 30_000 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d acks before timeout: %s", n, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.kill() // SIGKILL mid-stream
	close(stop)
	wg.Wait()
	cl.Close() // fails what is still in flight; those were never acknowledged
	mu.Lock()
	got := append([]acked(nil), acks...)
	mu.Unlock()

	// A torn write: half a batch header of garbage at the end of partition 0's
	// active segment.
	segs, _ := filepath.Glob(filepath.Join(data, "crash-0", "*.log"))
	sort.Strings(segs)
	if len(segs) == 0 {
		t.Fatal("no segment for crash-0")
	}
	f, err := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 1, 0, 0xde, 0xad, 0xbe, 0xef, 2, 1, 2, 3})
	f.Close()

	p2 := startServer(t, data, port)
	cons, err := kgo.NewClient(kgo.SeedBrokers(p2.addr), kgo.DisableIdempotentWrite(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"crash": {
			0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart(), 2: kgo.NewOffset().AtStart(), 3: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	// The restarted broker serves its partitions once its controller has
	// told it to lead them again.
	var total int64
	for {
		ends, err := kadm.NewClient(cons).ListEndOffsets(ctx, "crash")
		total = 0
		if err == nil && ends.Error() == nil && len(ends["crash"]) == 4 {
			ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("partitions never came back: %v %v\n%s", err, ends.Error(), p2.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	stored := map[int32]map[int64]string{}
	var n int64
	for n < total {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", n, total)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch partition %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if stored[r.Partition] == nil {
				stored[r.Partition] = map[int64]string{}
			}
			if int64(len(stored[r.Partition])) != r.Offset {
				t.Fatalf("partition %d: offset %d after %d records", r.Partition, r.Offset, len(stored[r.Partition]))
			}
			stored[r.Partition][r.Offset] = string(r.Value)
			n++
		})
	}
	for _, a := range got {
		if v, ok := stored[a.partition][a.offset]; !ok || v != a.value {
			t.Fatalf("acknowledged record %d/%d lost or changed (have %q)", a.partition, a.offset, v)
		}
	}
	t.Logf("%d acknowledged, %d stored after restart", len(got), total)

	// The log keeps working after recovery: the next offset follows the last
	// valid record.
	pr, err := kgo.NewClient(kgo.SeedBrokers(p2.addr), kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	res := pr.ProduceSync(ctx, &kgo.Record{Topic: "crash", Partition: 0, Value: []byte("after")})
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	if r, _ := res.First(); r.Offset != int64(len(stored[0])) {
		t.Fatalf("first offset after recovery = %d, want %d", r.Offset, len(stored[0]))
	}
	p2.stop()
}

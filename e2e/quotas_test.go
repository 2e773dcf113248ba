package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClientQuotasCLI sets, describes and deletes client quotas the
// kafka-configs.sh way (`samsa configs --entity-type users|clients`, over
// AlterClientQuotas and DescribeClientQuotas) on a running broker.
func TestClientQuotasCLI(t *testing.T) {
	p := startServer(t, t.TempDir(), freePort(t))
	bs := []string{"--bootstrap-server", p.addr}
	run := func(want string, args ...string) {
		t.Helper()
		if out, code := samsaConfigs(t, append(bs, args...)...); code != 0 || out != want {
			t.Fatalf("samsa configs %s: exit %d\n%s\nwant\n%s", strings.Join(args, " "), code, out, want)
		}
	}
	run("Completed updating config for client app-1.\n",
		"--alter", "--entity-type", "clients", "--entity-name", "app-1", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
	run("Completed updating config for user alice.\n",
		"--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app-1",
		"--add-config", "request_percentage=12.5")
	run("Completed updating default config for users in the cluster.\n",
		"--alter", "--entity-type", "users", "--entity-default", "--add-config", "producer_byte_rate=4096")

	run("Quota configs for client-id 'app-1' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0\n",
		"--describe", "--entity-type", "clients", "--entity-name", "app-1")
	run("Quota configs for user-principal 'alice', client-id 'app-1' are request_percentage=12.5\n",
		"--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app-1")
	run("Quota configs for the default user-principal are producer_byte_rate=4096.0\n",
		"--describe", "--entity-type", "users", "--entity-default")

	run("Completed updating config for client app-1.\n",
		"--alter", "--entity-type", "clients", "--entity-name", "app-1", "--delete-config", "producer_byte_rate")
	run("Quota configs for client-id 'app-1' are consumer_byte_rate=2048.0\n",
		"--describe", "--entity-type", "clients", "--entity-name", "app-1")
	if out, code := samsaConfigs(t, append(bs, "--alter", "--entity-type", "clients", "--entity-name", "app-1",
		"--add-config", "producer_byte_rate=1.5")...); code == 0 || !strings.Contains(out, "must be a LONG value") {
		t.Fatalf("fractional producer_byte_rate: exit %d\n%s", code, out)
	}
}

// TestClientQuotasThrottle runs, on one broker, a producer over its
// client id's producer_byte_rate and a consumer over its
// consumer_byte_rate, and checks each is held within 10% of its quota
// (bytes acknowledged or consumed per second over quotaRun, after the
// quota's first full window, quotaWarm), while a client id without a
// quota produces and consumes on the same broker well above it and is
// never throttled. Kafka's Rate pads a short history to samples-1
// windows, so a new client gets that much at once before it is held to
// the quota, and its purge of old samples makes a greedy client's rate a
// sawtooth around the quota; the broker uses quota.window.num=2 and 8 KiB
// requests to keep both small against 10%, and the test short. (With
// the default 11, a greedy client alternates bursts of 10 windows' worth
// and as long throttles; its long-run rate is within 10% either way:
// internal/quota's TestGreedyClientHeldToQuota.)
func TestClientQuotasThrottle(t *testing.T) {
	const quota, quotaWarm, quotaRun = 256 << 10, 2 * time.Second, 10 * time.Second
	dir, port := t.TempDir(), freePort(t)
	props := []string{"quota.window.num=2", "quota.window.size.seconds=1"}
	p := startServer(t, dir, port, props...)
	for _, c := range []string{"slow-producer producer_byte_rate", "slow-consumer consumer_byte_rate"} {
		name, key, _ := strings.Cut(c, " ")
		if out, code := samsaConfigs(t, "--bootstrap-server", p.addr, "--alter", "--entity-type", "clients",
			"--entity-name", name, "--add-config", fmt.Sprintf("%s=%d", key, quota)); code != 0 {
			t.Fatalf("samsa configs: exit %d\n%s", code, out)
		}
	}
	// Restarted, the broker serves its first request under the quotas.
	p.stop()
	p = startServer(t, dir, port, props...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	free, freeThrottles := quotaClient(t, p.addr, "free")
	adm := kadm.NewClient(free)
	for _, topic := range []string{"data", "slow"} {
		if res, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || res.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, res.Err)
		}
	}
	n, took := produceFor(ctx, free, "data", 16<<20, 0, time.Minute)
	checkFree(t, "producer", n, took, quota, freeThrottles)

	var wg sync.WaitGroup
	wg.Go(func() {
		cl, throttles := quotaClient(t, p.addr, "slow-producer")
		n, took := produceFor(ctx, cl, "slow", 1<<40, quotaWarm, quotaRun)
		checkQuota(t, "producer", n, took, quota, throttles)
	})
	wg.Go(func() {
		cl, throttles := quotaClient(t, p.addr, "slow-consumer", kgo.ConsumeTopics("data"))
		n, took := consumeFor(ctx, cl, 1<<40, quotaWarm, quotaRun)
		checkQuota(t, "consumer", n, took, quota, throttles)
	})
	wg.Go(func() {
		cl, throttles := quotaClient(t, p.addr, "free", kgo.ConsumeTopics("data"))
		n, took := consumeFor(ctx, cl, 16<<20, 0, time.Minute)
		checkFree(t, "consumer", n, took, quota, throttles)
	})
	wg.Wait()
}

// quotaClient is a client with the client id, 8 KiB uncompressed
// produce batches and 8 KiB fetches, reading from the start, counting the throttles it is told of.
func quotaClient(t *testing.T, addr, clientID string, opts ...kgo.Opt) (*kgo.Client, *atomic.Int64) {
	t.Helper()
	throttles := &atomic.Int64{}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(clientID),
		kgo.ProducerBatchMaxBytes(8 << 10), kgo.MaxBufferedRecords(64), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.FetchMaxBytes(8 << 10), kgo.FetchMaxPartitionBytes(8 << 10),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(throttleHook{throttles})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, throttles
}

type throttleHook struct{ n *atomic.Int64 }

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
	}
}

// produceFor produces 4 KiB records until limit bytes are acknowledged or
// warm+d has passed, and returns the bytes acknowledged after warm and
// the time from warm to the end.
func produceFor(ctx context.Context, cl *kgo.Client, topic string, limit int64, warm, d time.Duration) (int64, time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, start.Add(warm+d))
	defer cancel()
	var acked, counted atomic.Int64
	done := make(chan struct{})
	value := make([]byte, 4<<10)
	rand.Read(value) // bytes on the wire are the bytes counted
	for ctx.Err() == nil && acked.Load() < limit {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
			if err != nil || ctx.Err() != nil {
				return
			}
			if time.Since(start) >= warm {
				counted.Add(int64(len(r.Value)))
			}
			if acked.Add(int64(len(r.Value))) >= limit {
				select {
				case done <- struct{}{}:
				default:
				}
			}
		})
	}
	if acked.Load() < limit {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	return counted.Load(), min(time.Since(start), warm+d) - warm
}

// consumeFor reads until limit bytes are consumed or warm+d has passed,
// and returns the bytes consumed after warm and the time from warm on.
func consumeFor(ctx context.Context, cl *kgo.Client, limit int64, warm, d time.Duration) (int64, time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithDeadline(ctx, start.Add(warm+d))
	defer cancel()
	var n, counted int64
	for n < limit && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			n += int64(len(r.Value))
			if time.Since(start) >= warm {
				counted += int64(len(r.Value))
			}
		})
	}
	return counted, min(time.Since(start), warm+d) - warm
}

func checkQuota(t *testing.T, what string, n int64, took time.Duration, quota float64, throttles *atomic.Int64) {
	rate := float64(n) / took.Seconds()
	t.Logf("throttled %s: %d bytes in %v: %.0f B/s for a quota of %.0f B/s (%.3f×), %d throttled responses",
		what, n, took.Round(time.Millisecond), rate, quota, rate/quota, throttles.Load())
	if rate < 0.9*quota || rate > 1.1*quota || throttles.Load() == 0 {
		t.Errorf("%s: %.0f B/s, want within 10%% of %.0f, throttled", what, rate, quota)
	}
}

func checkFree(t *testing.T, what string, n int64, took time.Duration, quota float64, throttles *atomic.Int64) {
	rate := float64(n) / took.Seconds()
	t.Logf("unthrottled %s: %d bytes in %v: %.0f B/s, %d throttled responses", what, n, took.Round(time.Millisecond), rate, throttles.Load())
	if rate < 2*quota || throttles.Load() != 0 {
		t.Errorf("unthrottled %s: %.0f B/s, %d throttled responses", what, rate, throttles.Load())
	}
}

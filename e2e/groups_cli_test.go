package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumeOnce joins group g, reads until it has seen want records (or the
// deadline), commits them and leaves; it returns the first offset read.
func consumeOnce(t *testing.T, addr, g, topic string, want int) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(g), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first, n := int64(-1), 0
	for n < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if first < 0 {
				first = r.Offset
			}
			n++
		})
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	return first
}

// samsa consumer-groups against a `samsa server`: --list, --describe
// (kafka-consumer-groups.sh's columns), --reset-offsets moving what the
// next consumer reads, --delete-offsets and --delete.
func TestConsumerGroupsCLI(t *testing.T) {
	p := startServer(t, t.TempDir(), freePort(t), "group.initial.rebalance.delay.ms=100")
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "cli-t"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "cli-t", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if first := consumeOnce(t, p.addr, "cli-g", "cli-t", 10); first != 0 {
		t.Fatalf("first read %d", first)
	}
	bs := []string{"--bootstrap-server", p.addr}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := samsaTool(t, 60*time.Second, "consumer-groups", append(bs, args...)...)
		if code != 0 {
			t.Fatalf("consumer-groups %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	if out := run("--list"); strings.TrimSpace(out) != "cli-g" {
		t.Fatalf("--list: %q", out)
	}
	out := run("--describe", "--group", "cli-g")
	fields := tableRow(t, out, "cli-g")
	if len(fields) != 9 || fields[1] != "cli-t" || fields[3] != "10" || fields[4] != "10" || fields[5] != "0" {
		t.Fatalf("--describe:\n%s", out)
	}
	if !strings.Contains(out, "GROUP") || !strings.Contains(out, "CURRENT-OFFSET  LOG-END-OFFSET  LAG") {
		t.Fatalf("--describe header:\n%s", out)
	}
	out = run("--reset-offsets", "--group", "cli-g", "--topic", "cli-t", "--to-offset", "4", "--dry-run")
	if f := tableRow(t, out, "cli-g"); f[3] != "4" {
		t.Fatalf("dry run:\n%s", out)
	}
	if f := tableRow(t, run("--describe", "--group", "cli-g"), "cli-g"); f[3] != "10" {
		t.Fatal("a dry run moved the offset")
	}
	run("--reset-offsets", "--group", "cli-g", "--topic", "cli-t", "--shift-by", "-6", "--execute")
	if first := consumeOnce(t, p.addr, "cli-g", "cli-t", 6); first != 4 {
		t.Fatalf("after reset to 4 (shift-by -6), the consumer read from %d", first)
	}
	if out := run("--delete-offsets", "--group", "cli-g", "--topic", "cli-t"); !strings.Contains(out, "Successful") {
		t.Fatalf("--delete-offsets:\n%s", out)
	}
	if out := run("--delete", "--group", "cli-g"); !strings.Contains(out, "Deletion of requested consumer groups ('cli-g') was successful.") {
		t.Fatalf("--delete:\n%s", out)
	}
	if out := run("--list"); strings.TrimSpace(out) != "" {
		t.Fatalf("--list after delete: %q", out)
	}
}

// tableRow returns the fields of the first line starting with first.
func tableRow(t *testing.T, out, first string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == first {
			return f
		}
	}
	t.Fatalf("no row for %s in\n%s", first, out)
	return nil
}

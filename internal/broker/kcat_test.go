package broker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kcat runs Debian's kcat (librdkafka) against the broker. CI sets
// SAMSA_REQUIRE_KCAT so that a missing kcat fails instead of skipping.
func kcat(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_KCAT") != "" {
			t.Fatal("kcat is required but not installed")
		}
		t.Skip("kcat not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %v: %v\nstderr: %s", args, err, errb.String())
	}
	return out.String()
}

// TestKcat lists metadata, produces with keys and consumes back with
// librdkafka, then deletes the topic.
func TestKcat(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	addr := b.Addr().String()
	cl := newClient(t, b)
	createTopic(t, cl, "kc", 3, nil)

	meta := kcat(t, nil, "-b", addr, "-L")
	if !strings.Contains(meta, "1 brokers:") || !strings.Contains(meta, `topic "kc" with 3 partitions`) {
		t.Fatalf("kcat -L:\n%s", meta)
	}

	kcatRoundTrip(t, addr, "kc", 1, 3000, "acks=all")

	// Auto-creation through librdkafka's producer metadata request.
	kcat(t, []byte("hello\n"), "-b", addr, "-P", "-t", "kc-auto")
	if out := kcat(t, nil, "-b", addr, "-C", "-t", "kc-auto", "-o", "beginning", "-e"); strings.TrimSpace(out) != "hello" {
		t.Fatalf("auto-created topic: %q", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).DeleteTopic(ctx, "kc"); err != nil {
		t.Fatal(err)
	}
	if meta := kcat(t, nil, "-b", addr, "-L"); strings.Contains(meta, `topic "kc" `) {
		t.Fatalf("deleted topic still listed:\n%s", meta)
	}
}

// TestKcatReads100k produces 100k records over 8 partitions with franz-go
// (keys, two headers, explicit timestamps) and consumes them back with kcat:
// every field of every record must match.
func TestKcatReads100k(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "kc100k", 8, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 100_000
	base := int64(1_750_000_000_000)
	want := map[string]bool{}
	offsets := make([]int64, 8)
	for i := range n {
		p := int32(i % 8)
		r := &kgo.Record{Topic: "kc100k", Partition: p, Key: fmt.Appendf(nil, "key%d", i),
			Value:     fmt.Appendf(nil, "value-%d-%s", i, strings.Repeat("x", i%50)),
			Headers:   []kgo.RecordHeader{{Key: "h1", Value: fmt.Appendf(nil, "%d", i*7)}, {Key: "h2", Value: []byte("two")}},
			Timestamp: time.UnixMilli(base + int64(i))}
		want[fmt.Sprintf("%d %d %d %s %s h1=%d,h2=two", p, offsets[p], base+int64(i), r.Key, r.Value, i*7)] = true
		offsets[p]++
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out := kcat(t, nil, "-b", b.Addr().String(), "-C", "-t", "kc100k", "-o", "beginning", "-e", "-q",
		"-f", "%p %o %T %k %s %h\n")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("kcat read %d records, want %d", len(lines), n)
	}
	for _, l := range lines {
		if !want[l] {
			t.Fatalf("kcat read a record that was not produced (or altered): %q", l)
		}
		delete(want, l)
	}
}

// TestKcatIdempotent produces with librdkafka's idempotent producer (it
// asks InitProducerId and refuses brokers without it) and reads back.
func TestKcatIdempotent(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	addr := b.Addr().String()
	createTopic(t, newClient(t, b), "kci", 2, nil)
	kcatRoundTrip(t, addr, "kci", 0, 2000, "enable.idempotence=true")
}

// kcatRoundTrip produces n keyed records to one partition with kcat (and
// the producer property prop) and reads them back, in order, from offset 0.
func kcatRoundTrip(t *testing.T, addr, topic string, partition, n int, prop string) {
	t.Helper()
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, "k%d:value-%d\n", i, i)
	}
	p := fmt.Sprint(partition)
	kcat(t, in.Bytes(), "-b", addr, "-P", "-t", topic, "-p", p, "-K:", "-X", prop)
	out := kcat(t, nil, "-b", addr, "-C", "-t", topic, "-p", p, "-o", "beginning", "-e", "-f", "%o %k %s\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != n {
		t.Fatalf("consumed %d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if want := fmt.Sprintf("%d k%d value-%d", i, i, i); l != want {
			t.Fatalf("line %d = %q, want %q", i, l, want)
		}
	}
}

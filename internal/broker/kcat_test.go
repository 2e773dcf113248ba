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

	var in bytes.Buffer
	const n = 3000
	for i := range n {
		fmt.Fprintf(&in, "k%d:value-%d\n", i, i)
	}
	kcat(t, in.Bytes(), "-b", addr, "-P", "-t", "kc", "-p", "1", "-K:", "-X", "acks=all")

	out := kcat(t, nil, "-b", addr, "-C", "-t", "kc", "-p", "1", "-o", "beginning", "-e", "-f", "%o %k %s\n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != n {
		t.Fatalf("consumed %d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if want := fmt.Sprintf("%d k%d value-%d", i, i, i); l != want {
			t.Fatalf("line %d = %q, want %q", i, l, want)
		}
	}

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

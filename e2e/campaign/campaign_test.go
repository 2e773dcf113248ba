// Package campaign runs the fault campaign's short profile as a test. It
// is a package of its own so that `go test ./...` runs it next to the e2e
// package, not after it.
package campaign

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/chaos"
)

var (
	samsaBin  string
	raceBuild bool // race_test.go
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "samsa-campaign-bin")
	if err != nil {
		panic(err)
	}
	samsaBin = filepath.Join(dir, "samsa")
	if err := chaos.BuildSamsa(samsaBin, raceBuild); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestFaultCampaign runs the fault campaign's short profile (issue 21):
// 20 random faults (seeded; the seed is in the log, SAMSA_CHAOS_SEED
// replays one) against a 3-member store and 3 brokers in network
// namespaces under idempotent and plain acks=all producers, a consumer and
// a consumer group; then the history check. Needs root for ip netns;
// skipped otherwise. The long profile is `go run ./cmd/samsa-chaos
// -profile long`.
func TestFaultCampaign(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	needNamespaces(ctx, t)
	seed := time.Now().UnixNano() % 1e9
	if s := os.Getenv("SAMSA_CHAOS_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatal(err)
		}
	}
	// SAMSA_CHAOS_DIR keeps the data and logs there (a replay to read).
	dir := os.Getenv("SAMSA_CHAOS_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	var out strings.Builder
	o := chaos.Options{
		Bin: samsaBin, Dir: dir, Seed: seed,
		Faults: 20, HoldMin: 2 * time.Second, HoldMax: 10 * time.Second, Gap: time.Second,
		Brokers: 3, Partitions: 6, Rate: 50, ProbeEvery: 200 * time.Millisecond, Idempotent: 2, Plain: 1,
		SessionTimeoutMs: 6000, DiskMB: 128, NetID: 90 + os.Getpid()%100, Out: &out,
	}
	rep, err := chaos.Run(ctx, o)
	rep.Print(&out)
	t.Log("\n" + out.String())
	if err != nil {
		logLines(t, o.Dir, rep.Leaderless)
		t.Fatal(err)
	}
	if n := rep.Violations(); n > 0 {
		logLines(t, o.Dir, churnTopics(rep.Topics))
		t.Fatalf("%d violations (seed %d; SAMSA_CHAOS_SEED=%d replays the faults)", n, seed, seed)
	}
	// The nemesis waits, after each heal, for an acknowledged write on
	// every partition: the history must show one before the next fault.
	for i, f := range rep.Faults {
		if f.Healthy >= 0 && f.Recovered < 0 {
			t.Errorf("fault %d (%s): healthy after %v, but the history has no acknowledged write on some partition between the heal and the next fault (seed %d)",
				i+1, f.Name, f.Healthy, seed)
		}
	}
}

// churnTopic finds the churn topics a violation names.
var churnTopic = regexp.MustCompile(`chaos-churn-[0-9]+`)

// churnTopics lists the churn topics the violations name.
func churnTopics(violations []string) []string {
	var names []string
	for _, v := range violations {
		for _, m := range churnTopic.FindAllString(v, -1) {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}

// logLines logs the processes' log lines (dir/*.log, gone with the test)
// that name one of names (topics or partitions, as topic-N), the last
// `most` of each log, so that a failure a replay of its seed does not
// repeat can still be read.
func logLines(t *testing.T, dir string, names []string) {
	if len(names) == 0 {
		return
	}
	// A name as a whole word, or a topic's before its partition's number:
	// chaos-moves-1 is not chaos-moves-10; chaos-churn-3 is in chaos-churn-3-0.
	words := make([]string, len(names))
	for i, n := range names {
		words[i] = regexp.QuoteMeta(n)
	}
	named := regexp.MustCompile(`(^|[^A-Za-z0-9._-])(` + strings.Join(words, "|") + `)($|[^A-Za-z0-9._])`)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	const most = 150
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		var last []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if named.MatchString(sc.Text()) {
				if last = append(last, sc.Text()); len(last) > most {
					last = last[1:]
				}
			}
		}
		f.Close()
		for _, l := range last {
			t.Logf("%s: %s", filepath.Base(path), l)
		}
	}
}

// needNamespaces skips t in -short runs and where network namespaces are
// unavailable (they need root and iproute2).
func needNamespaces(ctx context.Context, t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a cluster in network namespaces (minutes)")
	}
	if err := chaos.Available(ctx); err != nil {
		t.Skipf("network namespaces unavailable (needs root and iproute2): %v", err)
	}
}

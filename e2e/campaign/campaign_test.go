package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/chaos"
)

// TestFaultCampaign runs the fault campaign's short profile (issue 21):
// 20 random faults (seeded; the seed is in the log, SAMSA_CHAOS_SEED
// replays one) against a 3-member store and 3 brokers in network
// namespaces under idempotent and plain acks=all producers, a consumer and
// a consumer group; then the history check. Needs root for ip netns;
// skipped otherwise. The long profile is `go run ./cmd/samsa-chaos
// -profile long`.
func TestFaultCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault campaign takes minutes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	if err := chaos.Available(ctx); err != nil {
		t.Skipf("network namespaces unavailable (the campaign needs root and iproute2): %v", err)
	}
	seed := time.Now().UnixNano() % 1e9
	if s := os.Getenv("SAMSA_CHAOS_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	o := chaos.Options{
		Bin: samsaBin, Dir: t.TempDir(), Seed: seed,
		Faults: 20, HoldMin: 2 * time.Second, HoldMax: 6 * time.Second, Gap: time.Second,
		Brokers: 3, Partitions: 6, Rate: 50, Idempotent: 2, Plain: 1,
		SessionTimeoutMs: 6000, DiskMB: 128, NetID: 90 + os.Getpid()%100, Out: &out,
	}
	rep, err := chaos.Run(ctx, o)
	rep.Print(&out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Violations(); n > 0 {
		t.Fatalf("%d violations (seed %d; SAMSA_CHAOS_SEED=%d replays the faults)", n, seed, seed)
	}
}

// Command samsa-chaos runs Samsa's fault campaign (internal/chaos): a
// 3-member store and brokers of the real samsa binary, each in a network
// namespace, under idempotent and plain acks=all producers, a consumer and
// a consumer group, while random faults (seeded) are applied and healed;
// then a history check. It needs root (ip netns). Exit status 1 on any
// violation.
//
//	go run ./cmd/samsa-chaos                  # short profile: 20 faults, a few minutes
//	go run ./cmd/samsa-chaos -profile long    # 200 faults
//	go run ./cmd/samsa-chaos -seed 42         # replay a run's fault sequence
//	go run ./cmd/samsa-chaos -only pause-controller,kill-controller -faults 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-kafka/samsa/internal/chaos"
	"github.com/samsa-kafka/samsa/internal/config"
)

func main() {
	profile := flag.String("profile", "short", "short (20 faults) or long (200 faults)")
	faults := flag.Int("faults", 0, "number of faults (default: the profile's)")
	seed := flag.Int64("seed", time.Now().UnixNano()%1e9, "seed of the fault sequence")
	bin := flag.String("bin", "", "samsa binary (default: go build ./cmd/samsa)")
	dir := flag.String("dir", "", "data and logs (default: a temporary dir, kept when the run finds a violation)")
	disk := flag.Int("disk-mb", 256, "tmpfs log dirs of this size for the disk-full fault (0: none)")
	only := flag.String("only", "", "comma-separated fault kinds to choose from (default: all): "+strings.Join(chaos.Kinds(), ", "))
	netID := flag.Int("net", 77, "subnet 10.77.N.0/24 and namespace names sc<N>-*")
	var brokerConfig []string
	flag.Func("broker-config", "key=value given to every broker as --override, over the campaign's settings (repeatable)", func(v string) error {
		if _, _, err := config.ParseOverride(v); err != nil {
			return err
		}
		brokerConfig = append(brokerConfig, v)
		return nil
	})
	flag.Parse()

	o := chaos.Options{
		Seed: *seed, Brokers: 3, Partitions: 6, Rate: 100, ProbeEvery: 100 * time.Millisecond, Idempotent: 2, Plain: 1,
		SessionTimeoutMs: 6000, DiskMB: *disk, NetID: *netID, Out: os.Stdout,
		Faults: 20, HoldMin: 2 * time.Second, HoldMax: 8 * time.Second, Gap: 2 * time.Second,
	}
	switch *profile {
	case "short":
	case "long":
		o.Faults, o.HoldMax, o.Gap = 200, 15*time.Second, 3*time.Second
	default:
		fail(fmt.Errorf("unknown profile %q", *profile))
	}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	if *faults > 0 {
		o.Faults = *faults
	}
	o.BrokerConfig = brokerConfig
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := chaos.Available(ctx); err != nil {
		fail(fmt.Errorf("network namespaces unavailable (root and iproute2 needed): %w", err))
	}
	o.Dir = *dir
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "samsa-chaos")
		if err != nil {
			fail(err)
		}
		o.Dir = d
	}
	o.Bin = *bin
	if o.Bin == "" {
		o.Bin = filepath.Join(o.Dir, "samsa")
		if err := chaos.BuildSamsa(o.Bin, false); err != nil {
			fail(err)
		}
	}
	rep, err := chaos.Run(ctx, o)
	rep.Print(os.Stdout)
	if err != nil {
		fail(err)
	}
	if rep.Violations() > 0 {
		fmt.Printf("logs and data kept in %s\n", o.Dir)
		os.Exit(1)
	}
	if *dir == "" {
		os.RemoveAll(o.Dir)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "samsa-chaos:", err)
	os.Exit(2)
}

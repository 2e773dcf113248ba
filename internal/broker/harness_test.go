package broker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/config"
)

// testLogger writes the broker's log lines to t.Log.
type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func startBroker(t testing.TB, dir string, props map[string]string) *Broker {
	t.Helper()
	base := map[string]string{
		"broker.id": "0",
		"listeners": "PLAINTEXT://127.0.0.1:0",
		"log.dirs":  dir,
	}
	for k, v := range props {
		base[k] = v
	}
	cfg, warnings, err := config.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("config warnings: %v", warnings)
	}
	logger := slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := Start(cfg, Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func newClient(t testing.TB, b *Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(b.Addr().String()), kgo.DisableIdempotentWrite()}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(t testing.TB, cl *kgo.Client, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, configs, name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatalf("create %s: %v", name, res.Err)
	}
}

// topicID looks a topic's id up through Metadata.
func topicID(t testing.TB, cl *kgo.Client, name string) [16]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, name)
	if err != nil || td[name].Err != nil {
		t.Fatalf("metadata for %s: %v %v", name, err, td[name].Err)
	}
	return td[name].ID
}

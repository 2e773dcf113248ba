package embedetcd_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
)

func TestStartServeRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := embedetcd.StartLocal(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s.Endpoints(), "/k", "v")
	s.Close()
	// The data survives a restart from the same directory.
	s, err = embedetcd.StartLocal(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cli := client(t, s.Endpoints())
	resp, err := cli.Get(context.Background(), "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("after restart: %+v %v", resp, err)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []embedetcd.Config{
		{},
		{DataDir: t.TempDir(), InitialClusterState: "sometimes"},
		{DataDir: t.TempDir(), ClientURL: "http://[::1"},
	}
	for _, c := range tests {
		if s, err := embedetcd.Start(c); err == nil {
			s.Close()
			t.Fatalf("config %+v accepted", c)
		}
	}
}

func client(t *testing.T, endpoints []string) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func put(t *testing.T, endpoints []string, k, v string) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(context.Background(), k, v); err != nil {
		t.Fatal(err)
	}
}

// A member started and closed cleanly logs nothing at Warn or above:
// not etcd's warning about simple auth tokens (no tokens are used), nor
// its advice to serve HTTP on a port of its own (Info), nor the errors its
// serving goroutines end with when Close closes their listeners (Debug,
// still there for whoever looks).
func TestStartAndCloseQuiet(t *testing.T) {
	rec := recorder{min: slog.LevelDebug}
	s, err := embedetcd.StartLocal(filepath.Join(t.TempDir(), "store"), slog.New(&rec))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if loud := rec.atLeast(slog.LevelWarn); len(loud) > 0 {
		t.Fatalf("logged at Warn or above: %q", loud)
	}
	if len(rec.atLeast(slog.LevelDebug)) == 0 {
		t.Fatal("nothing logged at Debug: the closed listeners' errors went nowhere")
	}
}

// With a handler at Debug, etcd's Info entries come through at Debug (a
// member's raft election among them); with one at Info, they do not come
// through at all.
func TestInfoAtDebug(t *testing.T) {
	for _, minLevel := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		rec := recorder{min: minLevel}
		s, err := embedetcd.StartLocal(filepath.Join(t.TempDir(), "store"), slog.New(&rec))
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		elected := false
		for _, m := range rec.atLeast(slog.LevelDebug) {
			elected = elected || strings.Contains(m, "elected leader")
		}
		if want := minLevel == slog.LevelDebug; elected != want {
			t.Errorf("handler at %v: raft's election logged %v, want %v", minLevel, elected, want)
		}
	}
}

// recorder is a slog.Handler keeping the level and message of every
// record at min or above.
type recorder struct {
	mu   sync.Mutex
	min  slog.Level
	recs []slog.Record
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.min }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// atLeast lists the messages of the records at level or above.
func (r *recorder) atLeast(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.recs {
		if rec.Level >= level {
			out = append(out, rec.Level.String()+" "+rec.Message)
		}
	}
	return out
}

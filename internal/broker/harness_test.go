package broker

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// kadmEnd is partition 0's end offset.
func kadmEnd(ctx context.Context, cl *kgo.Client, topic string) (int64, error) {
	l, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return -1, err
	}
	o, _ := l.Lookup(topic, 0)
	return o.Offset, o.Err
}

// rawRequest sends one request on its own connection, bypassing the client's
// rewriting (kgo forces its own acks on Produce), and decodes the response.
func rawRequest(t testing.TB, addr string, req kmsg.Request) kmsg.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 7)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body = body[4:] // correlation id
	if resp.IsFlexible() && req.Key() != 18 {
		body = body[1:] // empty tagged fields of the response header
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	return resp
}

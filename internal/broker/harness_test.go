package broker

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zkserver"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zktest"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// testLogger writes the broker's log lines to t.Log.
type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// testLogger writes warnings and errors to t.Log. A benchmark also pays
// for the log samsa server writes by default: Info and above, to a file
// (as a server's stderr redirected).
func testLogger(t testing.TB) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})
	if _, bench := t.(*testing.B); bench {
		f, err := os.Create(filepath.Join(t.TempDir(), "broker.log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		h = slog.NewMultiHandler(h, slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(h)
}

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
	logger := testLogger(t)
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

// startCluster runs n brokers (ids 0..n-1) in this process on one embedded
// etcd, as `samsa dev` does, and waits until every broker sees them all.
// In a benchmark it may be a standalone ZooKeeper server instead (see
// clusterStore and storeKind).
func startCluster(t testing.TB, n int, props map[string]string) []*Broker {
	t.Helper()
	return startClusterWith(t, n, props, nil)
}

// startClusterRacks starts one broker per entry of racks, with that
// broker.rack.
func startClusterRacks(t testing.TB, racks []string) []*Broker {
	t.Helper()
	return startClusterWith(t, len(racks), nil, racks)
}

func startClusterWith(t testing.TB, n int, props map[string]string, racks []string) []*Broker {
	t.Helper()
	logger := testLogger(t)
	store, closeStore := clusterStore(t, logger)
	var brokers []*Broker
	t.Cleanup(func() {
		for _, b := range brokers {
			b.Close()
		}
		closeStore()
	})
	for id := range n {
		base := map[string]string{
			"broker.id":                        strconv.Itoa(id),
			"listeners":                        "PLAINTEXT://127.0.0.1:0",
			"log.dirs":                         t.TempDir(),
			"default.replication.factor":       strconv.Itoa(min(n, 3)),
			"offsets.topic.replication.factor": strconv.Itoa(min(n, 3)),
		}
		for k, v := range props {
			base[k] = v
		}
		if racks != nil {
			base["broker.rack"] = racks[id]
		}
		cfg, _, err := config.Load(base)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Start(cfg, Options{Logger: logger, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		brokers = append(brokers, b)
	}
	// Raw Metadata requests: kadm answers from the client's metadata cache.
	for _, b := range brokers {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 9
			m := rawRequest(t, b.Addr().String(), req).(*kmsg.MetadataResponse)
			if len(m.Brokers) == n && m.ControllerID >= 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("broker %d never saw the cluster: %d brokers, controller %d", b.NodeID(), len(m.Brokers), m.ControllerID)
			}
		}
	}
	return brokers
}

// clusterStore starts the store the brokers share and returns it with
// the func that closes it (after the brokers). By default an embedded etcd,
// as samsa dev runs. A benchmark whose storeKind is zookeeper gets
// a standalone ZooKeeper server process instead (zktest: Debian's
// zookeeper, killed at cleanup), with zkstore's limits (64 operations and
// jute.maxbuffer per transaction); the brokers' sessions keep
// metadata.store.session.timeout.ms (6 s) either way. Tests always run on
// etcd.
func clusterStore(t testing.TB, logger *slog.Logger) (metastore.Store, func()) {
	t.Helper()
	switch kind := storeKind(t); kind {
	case "etcd":
	case "zookeeper":
		if err := zkserver.Installed(); err != nil {
			t.Fatal(err) // asked for: no skip
		}
		srv := zktest.Start(t)
		store, err := zkstore.Connect(zkstore.Config{Servers: []string{srv.Addr}, SessionTimeout: 6 * time.Second,
			Logger: logger.With("component", "store")})
		if err != nil {
			t.Fatal(err)
		}
		return store, func() { store.Close() }
	default:
		t.Fatalf("store %q (SAMSA_BENCH_STORE): want etcd or zookeeper", kind)
	}
	srv, err := embedetcd.StartLocal(t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	// As samsa dev: the embedded store takes transactions of up to
	// embedetcd.MaxTxnOps operations.
	store, err := etcdstore.ConnectMaxOps(srv.Endpoints(), "", 10*time.Second, logger, embedetcd.MaxTxnOps)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	return store, func() {
		store.Close()
		srv.Close()
	}
}

// storeKind is the store startCluster runs on: in a benchmark run per
// store (benchStores), the store its name carries ("…/store=zookeeper");
// in another benchmark SAMSA_BENCH_STORE's value if it names one store;
// etcd otherwise, and always in tests.
func storeKind(t testing.TB) string {
	if _, bench := t.(*testing.B); !bench {
		return "etcd"
	}
	for _, part := range strings.Split(t.Name(), "/") {
		if kind, ok := strings.CutPrefix(part, "store="); ok {
			return kind
		}
	}
	switch kinds := benchStoreKinds(); len(kinds) {
	case 1:
		return kinds[0]
	default:
		t.Fatalf("SAMSA_BENCH_STORE=%q names several stores; %s does not run per store", os.Getenv("SAMSA_BENCH_STORE"), t.Name())
		return ""
	}
}

// benchStoreKinds is SAMSA_BENCH_STORE's comma-separated list of stores,
// etcd when it is unset.
func benchStoreKinds() []string {
	v := os.Getenv("SAMSA_BENCH_STORE")
	if v == "" {
		return []string{"etcd"}
	}
	return strings.Split(v, ",")
}

// benchStores runs fn as a sub-benchmark "store=<kind>" for each store
// SAMSA_BENCH_STORE lists (etcd when unset), so that one run puts the same
// benchmark on etcd and on ZooKeeper next to each other:
//
//	SAMSA_BENCH_STORE=etcd,zookeeper go test ./internal/broker -run '^$' -bench BrokerCrash -benchtime 1x
func benchStores(b *testing.B, fn func(b *testing.B)) {
	for _, kind := range benchStoreKinds() {
		b.Run("store="+kind, fn)
	}
}

// controllerOf returns the active controller among brokers.
func controllerOf(t testing.TB, brokers []*Broker) *Broker {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, b := range brokers {
			if b.IsController() {
				return b
			}
		}
	}
	t.Fatal("no controller")
	return nil
}

func tpOf(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}

// recordBatch is one valid batch of string values.
func recordBatch(values ...string) []byte {
	return recordtest.Values(time.Now().UnixMilli(), values...)
}

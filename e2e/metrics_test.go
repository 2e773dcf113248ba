package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A broker with metrics.listener serves its Prometheus metrics: after a
// produce and a consume, the requests by API and by phase are there with
// the counts the clients caused, next to the Go runtime's and the
// process's; the topic's bytes in and out until it is deleted.
func TestMetricsListener(t *testing.T) {
	mport := freePort(t)
	p := startServer(t, t.TempDir(), freePort(t), fmt.Sprintf("metrics.listener=127.0.0.1:%d", mport))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "m"); err != nil {
		t.Fatal(err)
	}
	produceConsume(ctx, t, p.addr, "m", "v")

	value := func(series string) float64 { t.Helper(); return metricOf(t, mport, series) }
	// Produce: the one ProduceSync (a retried request would add more).
	if n := value(`samsa_requests_total{api="Produce"}`); n < 1 {
		t.Errorf("%v Produce requests", n)
	}
	for _, phase := range []string{"request_queue", "local", "response_queue", "response_send", "total"} {
		if n := value(`samsa_request_phase_seconds_count{api="Produce",phase="` + phase + `"}`); n < 1 {
			t.Errorf("Produce %s: %v observations", phase, n)
		}
	}
	if n := value(`samsa_request_phase_seconds_count{api="Fetch",phase="total"}`); n < 1 {
		t.Errorf("Fetch total: %v observations", n)
	}
	// One broker: the controller, leading topic m's one partition (and
	// nothing else: the consume used no group).
	for series, want := range map[string]float64{
		"samsa_controller_active": 1, "samsa_controller_topics": 1, "samsa_controller_partitions": 1,
		"samsa_controller_offline_partitions": 0, "samsa_replica_manager_partitions": 1, "samsa_replica_manager_leaders": 1,
		"samsa_replica_manager_under_replicated_partitions":       0,
		`samsa_purgatory_delayed_operations{operation="Produce"}`: 0, `samsa_purgatory_delayed_operations{operation="DeleteRecords"}`: 0,
	} {
		if n := value(series); n != want {
			t.Errorf("%s %v, want %v", series, n, want)
		}
	}
	if n := value(`samsa_controller_event_duration_seconds_count{event="StoreChange"}`); n < 1 { // the topic's creation at least
		t.Errorf("controller StoreChange events: %v observed", n)
	}
	if n := value("samsa_controller_event_queue_size"); n < 0 {
		t.Errorf("samsa_controller_event_queue_size %v", n)
	}
	// The one record produced, and fetched by the consumer (at least
	// once: a fetch may repeat).
	if n := value("samsa_messages_in_total"); n != 1 {
		t.Errorf("samsa_messages_in_total %v, want 1", n)
	}
	in, out := value("samsa_bytes_in_total"), value("samsa_bytes_out_total")
	if in < 61 || out < in { // a batch's header is 61 bytes
		t.Errorf("samsa_bytes_in_total %v, samsa_bytes_out_total %v: want a batch in and at least as much out", in, out)
	}
	if n := value("samsa_replication_bytes_out_total"); n != 0 {
		t.Errorf("samsa_replication_bytes_out_total %v with no follower", n)
	}
	// The produce (a retry, refused NOT_LEADER_OR_FOLLOWER, would count
	// one more, not failed).
	if n, failed := value("samsa_total_produce_requests_total"), value("samsa_failed_produce_requests_total"); n < 1 || failed != 0 {
		t.Errorf("produce requests' partitions: %v, failed %v; want at least 1, 0", n, failed)
	}
	// The consumer's fetches of m's partition (at least the one that read
	// the record).
	if n, failed := value("samsa_total_fetch_requests_total"), value("samsa_failed_fetch_requests_total"); n < 1 || failed != 0 {
		t.Errorf("fetch requests' partitions: %v, failed %v; want at least 1, 0", n, failed)
	}
	// A Metadata request for a topic that does not exist (without
	// creating it) is answered UNKNOWN_TOPIC_OR_PARTITION for it, counted
	// as Kafka's ErrorsPerSec.
	md, err := kadm.NewClient(cl).Metadata(ctx, "absent")
	if err != nil || md.Topics["absent"].Err == nil {
		t.Fatalf("metadata of an absent topic: %v, %+v", err, md.Topics["absent"])
	}
	if n := value(`samsa_request_errors_total{api="Metadata",error="UNKNOWN_TOPIC_OR_PARTITION"}`); n < 1 {
		t.Errorf("Metadata UNKNOWN_TOPIC_OR_PARTITION counted %v times", n)
	}
	// By topic: m's are all of them; they go with the topic.
	for series, want := range map[string]float64{`samsa_topic_bytes_in_total{topic="m"}`: in,
		`samsa_topic_messages_in_total{topic="m"}`: 1, `samsa_topic_bytes_out_total{topic="m"}`: out,
		`samsa_topic_total_produce_requests_total{topic="m"}`:  value("samsa_total_produce_requests_total"),
		`samsa_topic_failed_produce_requests_total{topic="m"}`: 0,
		`samsa_topic_total_fetch_requests_total{topic="m"}`:    value("samsa_total_fetch_requests_total"),
		`samsa_topic_failed_fetch_requests_total{topic="m"}`:   0} {
		if n := value(series); n != want {
			t.Errorf("%s %v, want %v", series, n, want)
		}
	}
	if _, err := kadm.NewClient(cl).DeleteTopics(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	for {
		if _, ok := metricsAt(t, mport)(`samsa_topic_bytes_in_total{topic="m"}`); !ok {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("topic m deleted, its counters still served")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := value("go_goroutines"); n < 10 {
		t.Errorf("go_goroutines %v", n)
	}
	if n := value("process_open_fds"); n < 1 {
		t.Errorf("process_open_fds %v", n)
	}
}

// metricOf is one series of the metrics served on 127.0.0.1:port; the
// test fails when it is not there.
func metricOf(t *testing.T, port int, series string) float64 {
	t.Helper()
	v, ok := metricsAt(t, port)(series)
	if !ok {
		t.Fatalf("no %s", series)
	}
	return v
}

// metricsAt reads the metrics a broker serves on 127.0.0.1:port and returns
// a look-up of one series' value (written as the exposition format writes
// it, labels sorted), false when it is not there.
func metricsAt(t *testing.T, port int) func(series string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return func(series string) (float64, bool) {
		m := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatalf("%s: %v", series, err)
		}
		return v, true
	}
}

// `samsa dev --metrics` serves every broker's metrics on one listener,
// each series labeled with its broker: the brokers' gauges sum to one
// active controller and to each partition's replicas.
func TestDevMetrics(t *testing.T) {
	port, mport := freePort(t), freePort(t)
	p := startSamsa(t, fmt.Sprintf("127.0.0.1:%d", port), "dev", "--dir", t.TempDir(), "--brokers", "2",
		"--port", strconv.Itoa(port), "--metrics", fmt.Sprintf("127.0.0.1:%d", mport))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cl *kgo.Client
	for {
		var err error
		if cl, err = kgo.NewClient(kgo.SeedBrokers(p.addr)); err == nil {
			if _, err = kadm.NewClient(cl).CreateTopic(ctx, 2, 2, nil, "d"); err == nil {
				break
			}
			cl.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("creating a topic on samsa dev: %v\n%s", err, p.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer cl.Close()
	for {
		value := metricsAt(t, mport)
		sum := func(name string) (float64, int) {
			total, n := 0.0, 0
			for _, b := range []string{"0", "1"} {
				if v, ok := value(name + `{broker="` + b + `"}`); ok {
					total, n = total+v, n+1
				}
			}
			return total, n
		}
		active, n1 := sum("samsa_controller_active")
		parts, n2 := sum("samsa_replica_manager_partitions")
		leaders, _ := sum("samsa_replica_manager_leaders")
		if n1 == 2 && n2 == 2 && active == 1 && parts == 4 && leaders == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("brokers' gauges: %d brokers with samsa_controller_active, sum %v; %d with partitions, sum %v (want 4), leaders %v (want 2)",
				n1, active, n2, parts, leaders)
		}
		time.Sleep(100 * time.Millisecond)
	}
	value := metricsAt(t, mport)
	_, on0 := value(`samsa_requests_total{api="CreateTopics",broker="0"}`)
	_, on1 := value(`samsa_requests_total{api="CreateTopics",broker="1"}`)
	if !on0 && !on1 {
		t.Error("no broker counted the CreateTopics requests")
	}
}

// A broker stopped (SIGSTOP) past its store session's timeout finds the
// session ended when it resumes, registers again and serves again: its
// metrics count the ended session and say it is ready once more.
func TestSessionExpiryCounted(t *testing.T) {
	st := startStore(t, "samsa-store")
	mport := freePort(t)
	p := startServer(t, t.TempDir(), freePort(t), "metadata.store.connect="+st.endpoint+storeChroot,
		fmt.Sprintf("metadata.store.session.timeout.ms=%d", sessionTimeoutMs), fmt.Sprintf("metrics.listener=127.0.0.1:%d", mport))
	series := func(name string) float64 { t.Helper(); return metricOf(t, mport, name) }
	for deadline := time.Now().Add(30 * time.Second); series("samsa_broker_ready") != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never ready:\n%s", p.stderr.String())
		}
	}
	if n := series("samsa_store_session_expirations_total"); n != 0 {
		t.Fatalf("%v session expirations at the start", n)
	}
	p.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2 * sessionTimeoutMs * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGCONT)
	// At least the one ended session (a loaded machine may end the new one
	// too), and ready again.
	for deadline := time.Now().Add(30 * time.Second); series("samsa_store_session_expirations_total") < 1 || series("samsa_broker_ready") != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("expirations %v, ready %v; want at least 1, and 1:\n%s", series("samsa_store_session_expirations_total"),
				series("samsa_broker_ready"), p.stderr.String())
		}
	}
}

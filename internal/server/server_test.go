package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

func TestApiVersionsEverySupportedVersion(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.Addr())
	rng := wire.Supported[int16(kmsg.ApiVersions)]
	for v := rng.Min; v <= rng.Max; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(v)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
		resp := c.roundTrip(req, int32(v)).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(wire.Supported) {
			t.Fatalf("v%d: error %d, %d keys", v, resp.ErrorCode, len(resp.ApiKeys))
		}
	}
}

// Kafka answers an ApiVersions version it does not know with a v0 body:
// UNSUPPORTED_VERSION and its own ApiVersions range, and keeps the
// connection open so the client can retry.
func TestApiVersionsUnsupportedVersion(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.Addr())
	too := kmsg.NewPtrApiVersionsRequest()
	too.SetVersion(wire.Supported[int16(kmsg.ApiVersions)].Max + 1)
	futureHeader := []byte{0, 18, 0x7f, 0, 0, 0, 0, 3, 0xff, 0xff, 0}
	frames := [][]byte{
		encodeRequest(too, 1),
		append(binary.BigEndian.AppendUint32(nil, uint32(len(futureHeader)+3)), append(futureHeader, 0xde, 0xad, 0xff)...),
	}
	for i, frame := range frames {
		c.write(frame)
		resp := c.read(kmsg.NewPtrApiVersionsResponse(), int32(i*2+1)) // v0 decoder
		ok := len(resp.(*kmsg.ApiVersionsResponse).ApiKeys) == 1
		if r := resp.(*kmsg.ApiVersionsResponse); r.ErrorCode != kerr.UnsupportedVersion.Code || !ok ||
			r.ApiKeys[0].ApiKey != 18 || r.ApiKeys[0].MaxVersion != wire.Supported[18].Max {
			t.Fatalf("frame %d: response %+v", i, resp)
		}
	}
	checkMetadataEcho(t, c.roundTrip(metadataRequest(9, "still-open"), 5), "still-open")
}

func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.Addr())
	versions := []int16{1, 9, 12, 4}
	var batch []byte
	const n = 60
	for i := range n {
		batch = append(batch, encodeRequest(metadataRequest(versions[i%len(versions)], fmt.Sprint("t", i)), int32(i))...)
	}
	c.write(batch)
	for i := range n {
		resp := kmsg.NewPtrMetadataResponse()
		resp.SetVersion(versions[i%len(versions)])
		checkMetadataEcho(t, c.read(resp, int32(i)), fmt.Sprint("t", i))
	}
	if m := ts.h.maxRunning.Load(); m != 1 {
		t.Fatalf("%d requests handled at once on one connection", m)
	}
}

func TestNilResponseWritesNothing(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.Addr())
	produce := func(acks int16) *kmsg.ProduceRequest {
		r := kmsg.NewPtrProduceRequest()
		r.SetVersion(9)
		r.Acks = acks
		return r
	}
	c.write(append(append(encodeRequest(produce(0), 1), encodeRequest(metadataRequest(9, "m"), 2)...),
		encodeRequest(produce(1), 3)...))
	checkMetadataEcho(t, c.read(metadataRequest(9).ResponseKind(), 2), "m")
	c.read(produce(1).ResponseKind(), 3)
}

func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	sized := func(b []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) }
	produce := encodeRequest(kmsg.NewPtrProduceRequest(), 1)[4:]
	oldProduce := kmsg.NewPtrProduceRequest()
	oldProduce.SetVersion(2)
	tests := []struct {
		name       string
		bad        []byte
		closeWrite bool
		level      string
	}{
		{"garbage", sized([]byte("hello, kafka broker")), false, "WARN"},
		// Metadata v9 (header: key, version, correlation id, null client
		// id, no tags) whose topics array says 4 topics and holds a byte.
		{"malformed body", sized([]byte{0, 3, 0, 9, 0, 0, 0, 7, 0xff, 0xff, 0, 0x05, 0xff}), false, "WARN"},
		{"oversized size prefix", []byte{0, 0x10, 0, 0}, false, "WARN"},
		{"negative size prefix", []byte{0x80, 0, 0, 0}, false, "WARN"},
		{"truncated body", sized(produce[:len(produce)-5]), false, "WARN"},
		{"truncated frame", []byte{0, 0, 0, 100, 0, 3, 0, 1}, true, "WARN"},
		{"unknown key", sized([]byte{0x7f, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff}), false, "WARN"},
		{"unsupported version", encodeRequest(oldProduce, 7), false, "WARN"},
		{"handler error", encodeRequest(metadataRequest(9, "fail"), 7), false, "WARN"},
		{"handler panic", encodeRequest(metadataRequest(9, "panic"), 7), false, "ERROR"},
		{"wrong response type", encodeRequest(metadataRequest(9, "wrong"), 7), false, "WARN"},
	}
	ts := startServer(t, Config{MaxRequestBytes: 1 << 16})
	good := dial(t, ts.Addr())
	checkMetadataEcho(t, good.roundTrip(metadataRequest(9, "before"), 1), "before")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := dial(t, ts.Addr())
			// A request pipelined before the bad input is still answered.
			bad.write(append(encodeRequest(metadataRequest(9, "first"), 1), tt.bad...))
			if tt.closeWrite {
				bad.nc.(*net.TCPConn).CloseWrite()
			}
			checkMetadataEcho(t, bad.read(metadataRequest(9).ResponseKind(), 1), "first")
			bad.expectClosed()
			name := fmt.Sprint("after-", i)
			checkMetadataEcho(t, good.roundTrip(metadataRequest(9, name), int32(i+2)), name)
			remote := "remote=" + bad.nc.LocalAddr().String()
			if !hasLogLine(ts.logs.String(), "level="+tt.level, remote) {
				t.Fatalf("no %s line for %s in:\n%s", tt.level, remote, ts.logs)
			}
		})
	}
}

func hasLogLine(logs string, parts ...string) bool {
	for line := range strings.Lines(logs) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestFranzGoClient(t *testing.T) {
	ts := startServer(t, Config{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := cl.Request(context.Background(), metadataRequest(0, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.GetVersion(); v != wire.Supported[int16(kmsg.Metadata)].Max {
		t.Errorf("client chose Metadata v%d", v)
	}
	checkMetadataEcho(t, resp, "orders")
	// kgo asks ApiVersions at its newest version first, gets
	// UNSUPPORTED_VERSION, and retries at ours.
	if got := counterValue(t, ts, "samsa_requests_total", "ApiVersions"); got != 2 {
		t.Errorf("ApiVersions handled %v times, want 2", got)
	}
}

func TestCloseWithIdleAndBusyConnections(t *testing.T) {
	base := runtime.NumGoroutine()
	ts := startServer(t, Config{})
	idle := dial(t, ts.Addr())
	busy := dial(t, ts.Addr())
	// Queue requests behind the blocked one, too.
	busy.write(append(encodeRequest(metadataRequest(9, "block"), 1), encodeRequest(metadataRequest(9, "x"), 2)...))
	<-ts.h.blocked
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	idle.expectClosed()
	busy.expectClosed()
	if _, err := net.Dial("tcp", ts.Addr().String()); err == nil {
		t.Error("still accepting after Close")
	}
	settleGoroutines(t, base)
	if err := ts.Serve(); err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
}

func TestIdleTimeoutSparesBusyConnections(t *testing.T) {
	ts := startServer(t, Config{IdleTimeout: 100 * time.Millisecond})
	busy := dial(t, ts.Addr())
	busy.write(encodeRequest(metadataRequest(9, "wait"), 1))
	<-ts.h.blocked
	// Each idle connection outlives the timeout before it is closed; the
	// second one starts after the busy request was read.
	for range 2 {
		dial(t, ts.Addr()).expectClosed()
	}
	close(ts.h.release)
	checkMetadataEcho(t, busy.read(metadataRequest(9).ResponseKind(), 1), "wait")
	checkMetadataEcho(t, busy.roundTrip(metadataRequest(9, "again"), 2), "again")
}

func TestClientDisconnectCancelsHandler(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.Addr())
	c.write(encodeRequest(metadataRequest(9, "block"), 1))
	<-ts.h.blocked
	c.nc.Close()
	select {
	case <-ts.h.cancelled:
	case <-time.After(10 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("handler context not cancelled after the client left")
	}
}

func TestMetrics(t *testing.T) {
	ts := startServer(t, Config{})
	a, b := dial(t, ts.Addr()), dial(t, ts.Addr())
	for i := range 3 {
		a.roundTrip(metadataRequest(9), int32(i))
	}
	b.roundTrip(kmsg.NewPtrApiVersionsRequest(), 1)
	if got := counterValue(t, ts, "samsa_requests_total", "Metadata"); got != 3 {
		t.Errorf("Metadata requests = %v", got)
	}
	if got := counterValue(t, ts, "samsa_request_duration_seconds", "Metadata"); got != 3 {
		t.Errorf("Metadata observations = %v", got)
	}
	if got := counterValue(t, ts, "samsa_connections_active", ""); got != 2 {
		t.Errorf("active connections = %v", got)
	}
	// The error codes of the responses but NONE: a Metadata answer's
	// topic's; ApiVersions' UNSUPPORTED_VERSION for a version the server
	// does not know.
	a.roundTrip(metadataRequest(9, "x", "unknown", "y"), 3)
	too := kmsg.NewPtrApiVersionsRequest()
	too.SetVersion(wire.Supported[int16(kmsg.ApiVersions)].Max + 1)
	b.write(encodeRequest(too, 2))
	b.read(kmsg.NewPtrApiVersionsResponse(), 2)
	for _, c := range []struct {
		api, err string
		want     float64
	}{{"Metadata", "UNKNOWN_TOPIC_OR_PARTITION", 1}, {"ApiVersions", "UNSUPPORTED_VERSION", 1}, {"Metadata", "NONE", 0}} {
		if got := errorsCounted(t, ts, c.api, c.err); got != c.want {
			t.Errorf("samsa_request_errors_total{api=%q,error=%q} = %v, want %v", c.api, c.err, got, c.want)
		}
	}
	// A second server on the same registry shares the collectors.
	other, err := New(Config{Addr: "127.0.0.1:0", Handler: ts.h, Registerer: ts.reg})
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
}

// errorsCounted reads samsa_request_errors_total{api, error}.
func errorsCounted(t *testing.T, ts *testServer, api, errName string) float64 {
	t.Helper()
	if m := findMetric(t, ts, "samsa_request_errors_total", "api", api, "error", errName); m != nil {
		return m.Counter.GetValue()
	}
	return 0
}

// counterValue reads a counter or gauge value, or a histogram's count.
func counterValue(t *testing.T, ts *testServer, name, api string) float64 {
	t.Helper()
	var m *dto.Metric
	if api == "" {
		m = findMetric(t, ts, name)
	} else {
		m = findMetric(t, ts, name, "api", api)
	}
	switch {
	case m == nil:
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// findMetric is the first series of the metric name whose labels have
// the values given as name, value pairs; nil if there is none.
func findMetric(t *testing.T, ts *testServer, name string, labels ...string) *dto.Metric {
	t.Helper()
	mfs, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if labelValue(m, labels[i]) != labels[i+1] {
					continue series
				}
			}
			return m
		}
	}
	return nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{Addr: "127.0.0.1:0"}); err == nil {
		t.Error("New accepted a nil Handler")
	}
	if _, err := New(Config{Addr: "256.0.0.1:0", Handler: newFakeHandler()}); err == nil {
		t.Error("New accepted a bad address")
	}
}

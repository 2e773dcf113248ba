package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDynamicListeners: on the INTERNAL/EXTERNAL cluster, an EXTERNAL2
// listener (127.0.0.3) is added to broker 2 with IncrementalAlterConfigs
// (listeners, advertised.listeners, listener.security.protocol.map for
// broker resource "2"), as Kafka's DynamicListenerConfig allows. It is
// described as DYNAMIC_BROKER_CONFIG; a client bootstrapping on it is told
// of broker 2 only, at its EXTERNAL2 address (the others lack the
// listener), and produces and consumes through it. A restarted broker 2
// binds it again. Deleting the keys closes it with its connections: dial
// fails. Removing the inter-broker listener and setting the keys at
// <default> are INVALID_CONFIG with Kafka's messages.
func TestDynamicListeners(t *testing.T) {
	st := startStore(t, "samsa-store")
	l := startListenerCluster(t, st, false)
	c := &cluster{t: t, procs: l.procs}
	extAddr := func(id int32) string { return fmt.Sprintf("127.0.0.2:%d", l.external[id]) }
	c.waitView(extAddr(1), "3 brokers on EXTERNAL", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(extAddr(0), extAddr(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	ext2 := fmt.Sprintf("127.0.0.3:%d", freePort(t))
	listeners := fmt.Sprintf("INTERNAL://127.0.0.1:%d,EXTERNAL://%s,EXTERNAL2://%s", l.internal[2], extAddr(2), ext2)
	add := []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "listener.security.protocol.map", Value: kadm.StringPtr("INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,EXTERNAL2:PLAINTEXT")},
		{Op: kadm.SetConfig, Name: "listeners", Value: kadm.StringPtr(listeners)},
		{Op: kadm.SetConfig, Name: "advertised.listeners", Value: kadm.StringPtr(listeners)},
	}
	alterBroker2(ctx, t, adm, add, "")
	rcs, err := adm.DescribeBrokerConfigs(ctx, 2)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe broker 2: %v %+v", err, rcs)
	}
	for _, cfg := range rcs[0].Configs {
		if cfg.Key == "listeners" && (cfg.Value == nil || *cfg.Value != listeners || cfg.Source != kmsg.ConfigSourceDynamicBrokerConfig) {
			t.Errorf("listeners described as %v (%v), want %s (DYNAMIC_BROKER_CONFIG)", cfg.MaybeValue(), cfg.Source, listeners)
		}
	}

	// Through EXTERNAL2: only broker 2, at its EXTERNAL2 address; a
	// partition it leads takes acks=all writes and is read back.
	checkOnlyBroker2(ctx, t, ext2)
	createAssigned(t, []string{extAddr(0)}, "ext2", [][]int32{{2, 0, 1}})
	produceConsume(ctx, t, ext2, "ext2", "before restart")

	l.restart(2)
	c.waitView(extAddr(2), "broker 2 back on EXTERNAL", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })
	checkOnlyBroker2(ctx, t, ext2)
	electPreferred(ctx, t, adm, "ext2") // a follower led while broker 2 was away
	produceConsume(ctx, t, ext2, "ext2", "after restart")

	// Deleting the keys goes back to server.properties: EXTERNAL2 closes,
	// with the connections it had.
	open, err := net.Dial("tcp", ext2)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	var del []kadm.AlterConfig
	for _, a := range add {
		del = append(del, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: a.Name})
	}
	alterBroker2(ctx, t, adm, del, "")
	if conn, err := net.DialTimeout("tcp", ext2, time.Second); err == nil {
		conn.Close()
		t.Errorf("EXTERNAL2 (%s) still accepts connections once removed", ext2)
	}
	open.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("a connection to EXTERNAL2 is still open once it was removed: %v", err)
	}
	c.waitView(extAddr(0), "3 brokers on EXTERNAL", func(n int, ctrl int32) bool { return n == 3 && ctrl >= 0 })

	// Refused: the inter-broker listener removed; the keys at <default>.
	noInternal := "EXTERNAL://" + extAddr(2)
	alterBroker2(ctx, t, adm, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "listeners", Value: kadm.StringPtr(noInternal)},
		{Op: kadm.SetConfig, Name: "advertised.listeners", Value: kadm.StringPtr(noInternal)},
	}, `invalid value "INTERNAL" for inter.broker.listener.name: must be a listener name defined in advertised.listeners; `+
		`the valid options based on currently configured listeners are EXTERNAL`)
	res, err := adm.AlterBrokerConfigs(ctx, add[1:2])
	want := "Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.InvalidConfig) || res[0].ErrMessage != want {
		t.Errorf("listeners at <default>: %v %+v, want INVALID_CONFIG %q", err, res, want)
	}
}

// alterBroker2 alters broker 2's configs; refused is the INVALID_CONFIG
// message expected, "" for success.
func alterBroker2(ctx context.Context, t *testing.T, adm *kadm.Client, cfgs []kadm.AlterConfig, refused string) {
	t.Helper()
	res, err := adm.AlterBrokerConfigs(ctx, cfgs, 2)
	if err != nil || len(res) != 1 {
		t.Fatalf("alter broker 2: %v %+v", err, res)
	}
	switch {
	case refused == "" && res[0].Err != nil:
		t.Fatalf("alter broker 2: %v %s", res[0].Err, res[0].ErrMessage)
	case refused != "" && (!errors.Is(res[0].Err, kerr.InvalidConfig) || res[0].ErrMessage != refused):
		t.Fatalf("alter broker 2: %v %q, want INVALID_CONFIG %q", res[0].Err, res[0].ErrMessage, refused)
	}
}

// checkOnlyBroker2 bootstraps on addr and expects Metadata to list broker
// 2 alone, at addr.
func checkOnlyBroker2(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		if err == nil && len(m.Brokers) > 0 { // none until broker 2's UpdateMetadata with EXTERNAL2
			if len(m.Brokers) != 1 || m.Brokers[0].NodeID != 2 || net.JoinHostPort(m.Brokers[0].Host, fmt.Sprint(m.Brokers[0].Port)) != addr {
				t.Fatalf("bootstrapped on %s: brokers %+v, want broker 2 alone at %s", addr, m.Brokers, addr)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("metadata through %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// electPreferred makes partition 0's first replica lead again, once it is
// back in the ISR.
func electPreferred(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) {
	t.Helper()
	for {
		res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {0: {}}})
		if r, ok := res[topic][0]; err == nil && ok && (r.Err == nil || errors.Is(r.Err, kerr.ElectionNotNeeded)) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("preferred election of %s: %v %+v", topic, err, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// produceConsume writes value to topic through addr with acks=all and
// reads it back through addr.
func produceConsume(ctx context.Context, t *testing.T, addr, topic, value string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("produce through %s: %v", addr, err)
	}
	var got []string
	for !slices.Contains(got, value) {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		if ctx.Err() != nil {
			t.Fatalf("consumed %v through %s, want %q", got, addr, value)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

package metadata

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

// The /brokers/ids/<id> document of a broker with two listeners, as Kafka's
// BrokerIdZNode.encode (version 5) writes it, read back as the controller
// does.
func TestBrokerDocumentListeners(t *testing.T) {
	b := NewBroker(3, []Endpoint{
		{Listener: "INTERNAL", Host: "kafka-3.kafka", Port: 9092, Protocol: "PLAINTEXT"},
		{Listener: "EXTERNAL", Host: "::1", Port: 19092, Protocol: "PLAINTEXT"},
	}, "r1", time.UnixMilli(1700000000000))
	doc, _ := json.Marshal(b)
	want := `{"host":"kafka-3.kafka","port":9092,"endpoints":["INTERNAL://kafka-3.kafka:9092","EXTERNAL://[::1]:19092"],` +
		`"listener_security_protocol_map":{"EXTERNAL":"PLAINTEXT","INTERNAL":"PLAINTEXT"},"rack":"r1","jmx_port":-1,` +
		`"timestamp":"1700000000000","version":5}`
	if string(doc) != want {
		t.Errorf("document\n got %s\nwant %s", doc, want)
	}
	got, err := DecodeBroker(metastore.KV{Key: BrokerKey(3), Value: doc, Created: 42})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 3 || got.Epoch != 42 {
		t.Errorf("id %d epoch %d", got.ID, got.Epoch)
	}
	if e, ok := got.Endpoint("EXTERNAL"); !ok || e != (Endpoint{Listener: "EXTERNAL", Host: "::1", Port: 19092, Protocol: "PLAINTEXT"}) {
		t.Errorf("EXTERNAL endpoint %+v %v", e, ok)
	}
	if _, ok := got.Endpoint("CONTROLLER"); ok {
		t.Error("a listener the broker lacks was found")
	}
	if l := got.EndpointList(); len(l) != 2 || l[0].Listener != "INTERNAL" || l[1].Port != 19092 {
		t.Errorf("endpoint list %+v", l)
	}
}

// Without a PLAINTEXT endpoint, host is null and port -1 (Kafka's
// registerBroker: EndPoint(null, -1, null, null)).
func TestBrokerDocumentWithoutPlaintext(t *testing.T) {
	b := NewBroker(1, []Endpoint{{Listener: "SECURE", Host: "h", Port: 9093, Protocol: "SSL"}}, "", time.UnixMilli(0))
	doc, _ := json.Marshal(b)
	var raw map[string]any
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatal(err)
	}
	if h, ok := raw["host"]; !ok || h != nil || raw["port"] != float64(-1) {
		t.Errorf("host %v port %v, want null and -1: %s", raw["host"], raw["port"], doc)
	}
}

// A registration rewritten in place keeps its session and its epoch; once
// the session has ended (or another holds the id) it is ErrNotRegistered.
func TestUpdateBrokerRegistration(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	c := New(s)
	sess, err := s.NewSession(ctx, 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	plain := Endpoint{Listener: "PLAINTEXT", Host: "h", Port: 9092, Protocol: "PLAINTEXT"}
	epoch, err := c.RegisterBroker(ctx, sess, NewBroker(1, []Endpoint{plain}, "", time.UnixMilli(0)))
	if err != nil {
		t.Fatal(err)
	}
	ext := Endpoint{Listener: "EXTERNAL", Host: "x", Port: 19092, Protocol: "PLAINTEXT"}
	if err := c.UpdateBrokerRegistration(ctx, sess, NewBroker(1, []Endpoint{plain, ext}, "", time.UnixMilli(0))); err != nil {
		t.Fatal(err)
	}
	brokers, _, err := c.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) != 1 || brokers[0].Epoch != epoch {
		t.Fatalf("brokers %+v, want broker 1 at epoch %d", brokers, epoch)
	}
	if e, ok := brokers[0].Endpoint("EXTERNAL"); !ok || e != ext {
		t.Errorf("EXTERNAL endpoint %+v %v", e, ok)
	}
	kv, _, _ := s.Get(ctx, BrokerKey(1))
	if kv.Session != sess.ID() {
		t.Errorf("registration bound to session %d, want %d", kv.Session, sess.ID())
	}
	if !s.ExpireSession(sess.ID()) {
		t.Fatal("session not alive")
	}
	if err := c.UpdateBrokerRegistration(ctx, sess, NewBroker(1, []Endpoint{plain}, "", time.UnixMilli(0))); !errors.Is(err, ErrNotRegistered) {
		t.Errorf("after the session ended: %v, want ErrNotRegistered", err)
	}
	if _, found, _ := s.Get(ctx, BrokerKey(1)); found {
		t.Error("an update after the session ended wrote the registration again")
	}
}

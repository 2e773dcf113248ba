package metadata

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
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

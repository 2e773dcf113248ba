package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A broker with an inter-broker, a control-plane and a client listener, as
// the e2e clusters run them.
func listenerBroker(t *testing.T) *Broker {
	t.Helper()
	b, _, err := Load(map[string]string{
		"log.dirs":                       "/tmp/x",
		"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners":                      "INTERNAL://127.0.0.1:9091,EXTERNAL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
		"advertised.listeners":           "INTERNAL://127.0.0.1:9091,EXTERNAL://kafka.example.com:19092,CONTROLLER://127.0.0.1:9093",
		"inter.broker.listener.name":     "INTERNAL",
		"control.plane.listener.name":    "CONTROLLER",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The listener keys are per-broker dynamic, as in Kafka: refused at
// <default> with Kafka's message.
func TestListenerKeysPerBrokerOnly(t *testing.T) {
	for _, name := range listenerKeys {
		if _, err := ValidateBrokerConfigs(map[string]string{name: "X://:1"}, true); err != nil {
			t.Errorf("%s per broker: %v", name, err)
		}
		_, err := ValidateBrokerConfigs(map[string]string{name: "X://:1"}, false)
		want := "config: Cannot update these configs at default cluster level, broker id must be specified: Set(" + name + ")"
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s at <default>: %v, want %q", name, err, want)
		}
	}
}

// Kafka's DynamicListenerConfig.validateReconfiguration, after KafkaConfig's
// own listener rules on the new configuration, and Samsa's: the
// inter-broker and control-plane listeners stay as they are; only PLAINTEXT
// is served.
func TestValidateListenerUpdate(t *testing.T) {
	const (
		protoMap = "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL2:PLAINTEXT"
		keep     = "INTERNAL://127.0.0.1:9091,EXTERNAL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
		keepAdv  = "INTERNAL://127.0.0.1:9091,EXTERNAL://kafka.example.com:19092,CONTROLLER://127.0.0.1:9093"
	)
	for _, tt := range []struct {
		name string
		own  map[string]string
		bad  string // the error's text; "" = valid
	}{
		{"no listener key", map[string]string{"log.retention.ms": "1000"}, ""},
		{"add a listener", map[string]string{"listener.security.protocol.map": protoMap,
			"listeners": keep + ",EXTERNAL2://127.0.0.1:0", "advertised.listeners": keepAdv + ",EXTERNAL2://localhost:29092"}, ""},
		{"remove the client listener", map[string]string{
			"listeners": "INTERNAL://127.0.0.1:9091,CONTROLLER://127.0.0.1:9093", "advertised.listeners": "INTERNAL://127.0.0.1:9091,CONTROLLER://127.0.0.1:9093"}, ""},
		{"move the client listener", map[string]string{
			"listeners": "INTERNAL://127.0.0.1:9091,EXTERNAL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093", "advertised.listeners": keepAdv}, ""},
		{"advertise the client listener elsewhere", map[string]string{
			"advertised.listeners": "INTERNAL://127.0.0.1:9091,EXTERNAL://other.example.com:19092,CONTROLLER://127.0.0.1:9093"}, ""},
		{"no protocol for the new listener", map[string]string{"listeners": keep + ",EXTERNAL2://127.0.0.1:0"},
			`config: invalid value "` + keep + `,EXTERNAL2://127.0.0.1:0" for listeners: no security protocol defined for listener EXTERNAL2`},
		{"a new listener not PLAINTEXT", map[string]string{"listener.security.protocol.map": protoMap + ",SECURE:SSL",
			"listeners": keep + ",SECURE://127.0.0.1:0"},
			`config: invalid value "` + keep + `,SECURE://127.0.0.1:0" for listeners: listener SECURE uses SSL; only PLAINTEXT is supported`},
		{"advertised but not listened on", map[string]string{"listener.security.protocol.map": protoMap,
			"advertised.listeners": keepAdv + ",EXTERNAL2://localhost:29092"},
			`config: invalid value "` + keepAdv + `,EXTERNAL2://localhost:29092" for advertised.listeners: listener EXTERNAL2 is not defined in listeners`},
		{"remove the inter-broker listener", map[string]string{
			"listeners": "EXTERNAL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", "advertised.listeners": "EXTERNAL://kafka.example.com:19092,CONTROLLER://127.0.0.1:9093"},
			`config: invalid value "INTERNAL" for inter.broker.listener.name: must be a listener name defined in advertised.listeners; the valid options based on currently configured listeners are EXTERNAL,CONTROLLER`},
		{"move the inter-broker listener", map[string]string{
			"listeners": "INTERNAL://127.0.0.1:9081,EXTERNAL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", "advertised.listeners": keepAdv},
			"config: Inter-broker listener INTERNAL cannot be removed or changed dynamically, restart broker for update"},
		{"advertise the inter-broker listener elsewhere", map[string]string{
			"advertised.listeners": "INTERNAL://other:9091,EXTERNAL://kafka.example.com:19092,CONTROLLER://127.0.0.1:9093"},
			"config: Inter-broker listener INTERNAL cannot be removed or changed dynamically, restart broker for update"},
		{"move the control-plane listener", map[string]string{
			"listeners":            "INTERNAL://127.0.0.1:9091,EXTERNAL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9083",
			"advertised.listeners": "INTERNAL://127.0.0.1:9091,EXTERNAL://kafka.example.com:19092,CONTROLLER://127.0.0.1:9083"},
			"config: Control plane listener CONTROLLER cannot be removed or changed dynamically, restart broker for update"},
	} {
		b := listenerBroker(t)
		err := b.ValidateListenerUpdate(b, nil, tt.own)
		switch {
		case tt.bad == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.bad != "" && (err == nil || err.Error() != tt.bad || !errors.Is(err, ErrInvalidConfig)):
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.bad)
		}
	}
}

// The check is against the running configuration: once a listener was
// added, a write that keeps it is no listener change, and a broker whose
// listeners are as they were passes however they break a rule.
func TestValidateListenerUpdateAgainstCurrent(t *testing.T) {
	b := listenerBroker(t)
	own := map[string]string{"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTERNAL2:PLAINTEXT",
		"listeners": "INTERNAL://127.0.0.1:9091,EXTERNAL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093,EXTERNAL2://127.0.0.1:0"}
	cur, errs := b.WithDynamic(nil, own)
	if len(errs) > 0 || len(cur.Listeners) != 4 {
		t.Fatalf("with EXTERNAL2: %v %v", cur.Listeners, errs)
	}
	more := map[string]string{"log.retention.ms": "1000"}
	for k, v := range own {
		more[k] = v
	}
	if err := b.ValidateListenerUpdate(cur, nil, more); err != nil {
		t.Errorf("another key beside the same listeners: %v", err)
	}
	if err := b.ValidateListenerUpdate(cur, nil, nil); err != nil {
		t.Errorf("back to the static listeners: %v", err)
	}
}

// A dynamic listener layer that breaks a rule with the static configuration
// (server.properties changed since it was written) is dropped with the
// other listener keys; the rest of the layer still applies.
func TestWithDynamicDropsBrokenListeners(t *testing.T) {
	b := listenerBroker(t)
	nb, errs := b.WithDynamic(nil, map[string]string{"listeners": "EXTERNAL://127.0.0.1:9092", "log.retention.ms": "1000"})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "dynamic listener configs ignored") {
		t.Errorf("errors %v, want one on the listeners", errs)
	}
	if !slices.Equal(nb.Listeners, b.Listeners) || nb.LogRetention.Milliseconds() != 1000 {
		t.Errorf("listeners %v retention %v: want the static listeners and the dynamic retention", nb.Listeners, nb.LogRetention)
	}
}

func TestDiffListeners(t *testing.T) {
	l := func(name string, port int32) Listener {
		return Listener{Name: name, Host: "127.0.0.1", Port: port, Protocol: "PLAINTEXT"}
	}
	for _, tt := range []struct {
		name          string
		cur, next     []Listener
		closed, bound []Listener
	}{
		{"same", []Listener{l("A", 1), l("B", 2)}, []Listener{l("B", 2), l("A", 1)}, nil, nil},
		{"added", []Listener{l("A", 1)}, []Listener{l("A", 1), l("B", 2)}, nil, []Listener{l("B", 2)}},
		{"removed", []Listener{l("A", 1), l("B", 2)}, []Listener{l("A", 1)}, []Listener{l("B", 2)}, nil},
		{"moved", []Listener{l("A", 1), l("B", 2)}, []Listener{l("A", 1), l("B", 3)}, []Listener{l("B", 2)}, []Listener{l("B", 3)}},
		{"renamed", []Listener{l("A", 1), l("B", 2)}, []Listener{l("A", 1), l("C", 2)}, []Listener{l("B", 2)}, []Listener{l("C", 2)}},
		{"port 0 stays bound", []Listener{l("A", 0)}, []Listener{l("A", 0)}, nil, nil},
	} {
		closed, bound := DiffListeners(tt.cur, tt.next)
		if !slices.Equal(closed, tt.closed) || !slices.Equal(bound, tt.bound) {
			t.Errorf("%s: closed %v bound %v, want %v and %v", tt.name, closed, bound, tt.closed, tt.bound)
		}
	}
}

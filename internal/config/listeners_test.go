package config

import (
	"errors"
	"strings"
	"testing"
)

// Kafka's KafkaConfig listener rules (KafkaConfigTest.testDuplicateListeners,
// the control.plane.listener.name checks of validateValues).
func TestListenerRules(t *testing.T) {
	base := map[string]string{"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"}
	for _, tt := range []struct {
		name  string
		props map[string]string
		bad   string // substring of the error; "" = valid
	}{
		{"ports must differ", map[string]string{"listeners": "INTERNAL://localhost:9091,EXTERNAL://localhost:9091",
			"inter.broker.listener.name": "INTERNAL"}, "different port"},
		{"names must differ", map[string]string{"listeners": "INTERNAL://localhost:9091,INTERNAL://localhost:9092",
			"inter.broker.listener.name": "INTERNAL"}, "different name"},
		{"one IPv4 and one IPv6 may share a port", map[string]string{"listeners": "INTERNAL://127.0.0.1:9091,EXTERNAL://[::1]:9091",
			"inter.broker.listener.name": "INTERNAL"}, ""},
		{"port 0 never collides", map[string]string{"listeners": "INTERNAL://localhost:0,EXTERNAL://localhost:0",
			"inter.broker.listener.name": "INTERNAL"}, ""},
		{"advertised listeners may share a port", map[string]string{"listeners": "INTERNAL://:9091,EXTERNAL://:9092",
			"advertised.listeners": "INTERNAL://a:9091,EXTERNAL://b:9091", "inter.broker.listener.name": "INTERNAL"}, ""},
		{"inter-broker listener must be advertised", map[string]string{"listeners": "INTERNAL://:9091,EXTERNAL://:9092",
			"advertised.listeners": "EXTERNAL://b:9092", "inter.broker.listener.name": "INTERNAL"}, "advertised.listeners"},
		{"both inter-broker keys", map[string]string{"listeners": "INTERNAL://:9091", "inter.broker.listener.name": "INTERNAL",
			"security.inter.broker.protocol": "PLAINTEXT"}, "only one of"},
		{"default inter-broker listener is PLAINTEXT", map[string]string{"listeners": "INTERNAL://:9091"}, "inter.broker.listener.name"},
		{"control plane listener", map[string]string{"listeners": "INTERNAL://:9091,CONTROLLER://:9093",
			"inter.broker.listener.name": "INTERNAL", "control.plane.listener.name": "controller"}, ""},
		{"control plane listener must be advertised", map[string]string{"listeners": "INTERNAL://:9091,CONTROLLER://:9093",
			"advertised.listeners": "INTERNAL://a:9091", "inter.broker.listener.name": "INTERNAL",
			"control.plane.listener.name": "CONTROLLER"}, "control.plane.listener.name"},
		{"control plane listener must not be the inter-broker one", map[string]string{"listeners": "INTERNAL://:9091",
			"inter.broker.listener.name": "INTERNAL", "control.plane.listener.name": "INTERNAL"}, "different value"},
	} {
		props := map[string]string{"log.dirs": "/tmp/x"}
		for k, v := range base {
			props[k] = v
		}
		for k, v := range tt.props {
			props[k] = v
		}
		_, _, err := Load(props)
		switch {
		case tt.bad == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad) || !errors.Is(err, ErrInvalidConfig)):
			t.Errorf("%s: got %v, want an invalid config error with %q", tt.name, err, tt.bad)
		}
	}
}

func TestControllerToBrokerListenerName(t *testing.T) {
	props := map[string]string{"log.dirs": "/tmp/x", "listener.security.protocol.map": "INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners": "INTERNAL://:9091,CONTROLLER://:9093", "inter.broker.listener.name": "INTERNAL"}
	b, _, err := Load(props)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.ControllerToBrokerListenerName(); got != "INTERNAL" {
		t.Errorf("without control.plane.listener.name: %q, want INTERNAL", got)
	}
	props["control.plane.listener.name"] = "controller"
	if b, _, err = Load(props); err != nil {
		t.Fatal(err)
	}
	if got := b.ControllerToBrokerListenerName(); got != "CONTROLLER" {
		t.Errorf("with control.plane.listener.name: %q, want CONTROLLER", got)
	}
}

package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Listener is one NAME://host:port endpoint.
type Listener struct {
	Name     string // listener name, upper case (PLAINTEXT, INTERNAL…)
	Host     string // "" binds every interface / lets the caller fill it in
	Port     int32
	Protocol string // security protocol from listener.security.protocol.map
}

// String returns the NAME://host:port form Kafka prints.
func (l Listener) String() string {
	return l.Name + "://" + net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
}

// parseListeners fills Listeners, AdvertisedListeners and the inter-broker
// listener name, refusing anything but PLAINTEXT.
func (b *Broker) parseListeners() error {
	protoMap, err := parseProtocolMap(b.rawProtocolMap)
	if err != nil {
		return invalid("listener.security.protocol.map", b.rawProtocolMap, err.Error())
	}
	b.Listeners, err = parseListenerList(b.rawListeners, protoMap)
	if err != nil {
		return invalid("listeners", b.rawListeners, err.Error())
	}
	if len(b.Listeners) == 0 {
		return invalid("listeners", b.rawListeners, "no listener")
	}
	b.AdvertisedListeners = slices.Clone(b.Listeners)
	advName, advRaw := "listeners", b.rawListeners
	if _, ok := b.explicit["advertised.listeners"]; ok {
		advName, advRaw = "advertised.listeners", b.rawAdvertised
		if b.AdvertisedListeners, err = parseListenerList(advRaw, protoMap); err != nil {
			return invalid(advName, advRaw, err.Error())
		}
	}
	if err := checkAdvertised(b.AdvertisedListeners, b.Listeners); err != nil {
		return invalid(advName, advRaw, err.Error())
	}
	b.InterBrokerListenerName = strings.ToUpper(b.InterBrokerListenerName)
	if !slices.ContainsFunc(b.AdvertisedListeners, func(l Listener) bool { return l.Name == b.InterBrokerListenerName }) {
		return invalid("inter.broker.listener.name", b.InterBrokerListenerName,
			"must be a listener name defined in advertised.listeners")
	}
	return nil
}

// parseProtocolMap parses NAME:PROTOCOL pairs.
func parseProtocolMap(raw string) (map[string]string, error) {
	m := map[string]string{}
	for _, pair := range splitList(raw) {
		name, proto, ok := strings.Cut(pair, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %q is not NAME:PROTOCOL", pair)
		}
		if !slices.Contains(protocols, proto) {
			return nil, fmt.Errorf("unknown security protocol %q", proto)
		}
		m[name] = proto
	}
	return m, nil
}

// parseListenerList parses a comma-separated list of NAME://host:port.
func parseListenerList(raw string, protoMap map[string]string) ([]Listener, error) {
	var out []Listener
	for _, uri := range splitList(raw) {
		l, err := parseListener(uri, protoMap)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o Listener) bool { return o.Name == l.Name }) {
			return nil, fmt.Errorf("each listener must have a different name, %s repeats", l.Name)
		}
		out = append(out, l)
	}
	return out, nil
}

func parseListener(uri string, protoMap map[string]string) (Listener, error) {
	name, addr, ok := strings.Cut(uri, "://")
	name = strings.ToUpper(name)
	if !ok || name == "" {
		return Listener{}, fmt.Errorf("%q is not NAME://host:port", uri)
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return Listener{}, fmt.Errorf("%q is not NAME://host:port", uri)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return Listener{}, fmt.Errorf("bad port in %q", uri)
	}
	proto, ok := protoMap[name]
	if !ok {
		return Listener{}, fmt.Errorf("no security protocol defined for listener %s", name)
	}
	if proto != "PLAINTEXT" {
		return Listener{}, fmt.Errorf("listener %s uses %s; only PLAINTEXT is supported", name, proto)
	}
	return Listener{Name: name, Host: host, Port: int32(port), Protocol: proto}, nil
}

// checkAdvertised applies Kafka's rules: advertised names are a subset of
// the listener names, and no advertised host is a wildcard address.
func checkAdvertised(adv, listeners []Listener) error {
	for _, a := range adv {
		if !slices.ContainsFunc(listeners, func(l Listener) bool { return l.Name == a.Name }) {
			return fmt.Errorf("listener %s is not defined in listeners", a.Name)
		}
		if ip := net.ParseIP(a.Host); ip != nil && ip.IsUnspecified() {
			return fmt.Errorf("cannot advertise the nonroutable meta-address %s, use a routable address", a.Host)
		}
	}
	return nil
}

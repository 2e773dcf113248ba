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

// parseListeners fills Listeners, AdvertisedListeners, the inter-broker
// and control-plane listener names, with KafkaConfig's checks, refusing any
// security protocol but PLAINTEXT.
func (b *Broker) parseListeners() error {
	protoMap, err := parseProtocolMap(b.rawProtocolMap)
	if err != nil {
		return invalid("listener.security.protocol.map", b.rawProtocolMap, err.Error())
	}
	b.Listeners, err = parseListenerList(b.rawListeners, protoMap)
	if err == nil {
		err = checkDistinctPorts(b.Listeners)
	}
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
	return b.checkListenerNames(protoMap)
}

// checkListenerNames normalizes inter.broker.listener.name (or the name
// security.inter.broker.protocol implies) and control.plane.listener.name,
// and applies Kafka's rules to them.
func (b *Broker) checkListenerNames(protoMap map[string]string) error {
	_, named := b.explicit["inter.broker.listener.name"]
	if _, proto := b.explicit["security.inter.broker.protocol"]; named && proto {
		return invalid("inter.broker.listener.name", b.InterBrokerListenerName,
			"only one of inter.broker.listener.name and security.inter.broker.protocol should be set")
	}
	b.InterBrokerListenerName = strings.ToUpper(b.InterBrokerListenerName)
	if _, ok := protoMap[b.InterBrokerListenerName]; named && !ok {
		return invalid("inter.broker.listener.name", b.InterBrokerListenerName,
			"listener not found in listener.security.protocol.map")
	}
	if !b.advertises(b.InterBrokerListenerName) {
		return invalid("inter.broker.listener.name", b.InterBrokerListenerName,
			"must be a listener name defined in advertised.listeners; the valid options based on currently configured listeners are "+b.advertisedNames())
	}
	if b.ControlPlaneListenerName == "" {
		return nil
	}
	b.ControlPlaneListenerName = strings.ToUpper(b.ControlPlaneListenerName)
	switch {
	case !b.advertises(b.ControlPlaneListenerName):
		return invalid("control.plane.listener.name", b.ControlPlaneListenerName,
			"must be a listener name defined in advertised.listeners; the valid options based on currently configured listeners are "+b.advertisedNames())
	case b.ControlPlaneListenerName == b.InterBrokerListenerName:
		return invalid("control.plane.listener.name", b.ControlPlaneListenerName,
			"when defined, should have a different value from the inter broker listener name")
	}
	return nil
}

func (b *Broker) advertises(name string) bool {
	return slices.ContainsFunc(b.AdvertisedListeners, func(l Listener) bool { return l.Name == name })
}

func (b *Broker) advertisedNames() string {
	names := make([]string, len(b.AdvertisedListeners))
	for i, l := range b.AdvertisedListeners {
		names[i] = l.Name
	}
	return strings.Join(names, ",")
}

// ControllerToBrokerListenerName is the listener the controller reaches
// brokers on, and brokers the controller (AlterPartition, controlled
// shutdown): control.plane.listener.name, else inter.broker.listener.name,
// as Kafka's ControllerChannelManager and MetadataCacheControllerNodeProvider.
func (b *Broker) ControllerToBrokerListenerName() string {
	if b.ControlPlaneListenerName != "" {
		return b.ControlPlaneListenerName
	}
	return b.InterBrokerListenerName
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

// checkDistinctPorts applies Kafka's rule for listeners (not advertised
// ones): no two bind one port, unless they are exactly two, one on an IPv4
// address and the other on an IPv6 one (KIP-797). Port 0 picks a free port
// and never collides.
func checkDistinctPorts(ls []Listener) error {
	byPort := map[int32][]Listener{}
	for _, l := range ls {
		if l.Port != 0 {
			byPort[l.Port] = append(byPort[l.Port], l)
		}
	}
	for port, same := range byPort {
		if len(same) == 1 {
			continue
		}
		if len(same) == 2 && ipFamilies(same[0].Host, same[1].Host) {
			continue
		}
		return fmt.Errorf("each listener must have a different port unless exactly one listener has an IPv4 address and the other IPv6 address, port: %d", port)
	}
	return nil
}

// ipFamilies reports one host an IPv4 address and the other an IPv6 one.
func ipFamilies(a, b string) bool {
	ipa, ipb := net.ParseIP(a), net.ParseIP(b)
	if ipa == nil || ipb == nil {
		return false
	}
	return (ipa.To4() != nil) != (ipb.To4() != nil)
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

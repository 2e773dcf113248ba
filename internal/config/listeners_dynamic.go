package config

import (
	"fmt"
	"maps"
	"slices"
)

// Listeners at run time (KIP-226), as Kafka's DynamicListenerConfig:
// listeners, advertised.listeners and listener.security.protocol.map are
// per-broker dynamic. A change is checked as a whole with the rest of the
// broker's configuration (KafkaConfig's listener rules, then
// validateReconfiguration's); once applied, the broker closes the
// listeners that went, binds the new ones and registers its new
// endpoints (DiffListeners says which).

// listenerKeys are the keys DynamicListenerConfig reconfigures.
var listenerKeys = []string{"advertised.listeners", "listener.security.protocol.map", "listeners"}

// ValidateListenerUpdate checks the listeners a broker would have with def
// and own as its dynamic layers; b is its static configuration and cur the
// running one (b with its current layers). Nil when the layers leave the
// listener keys as cur has them. Errors wrap ErrInvalidConfig: KafkaConfig's
// rules on the new listeners, then Kafka's validateReconfiguration, then
// Samsa's own: the inter-broker and control-plane listeners keep their
// address and advertised address (the controller's connections to the
// brokers are made once, on them).
func (b *Broker) ValidateListenerUpdate(cur *Broker, def, own map[string]string) error {
	curDef, curOwn := cur.Dynamic()
	if maps.Equal(pick(def, listenerKeys), pick(curDef, listenerKeys)) &&
		maps.Equal(pick(own, listenerKeys), pick(curOwn, listenerKeys)) {
		return nil
	}
	next, _, err := b.layered(def, own)
	if err != nil {
		return err
	}
	return checkListenerUpdate(cur, next)
}

// checkListenerUpdate applies the rules of a listener change beyond those of
// one configuration. (Kafka's "Advertised listener must be specified for
// inter-broker listener" cannot fail here: KafkaConfig's rule on
// inter.broker.listener.name, in resolve, says it first.)
func checkListenerUpdate(cur, next *Broker) error {
	kinds := []struct{ kind, name string }{{"Inter-broker", cur.InterBrokerListenerName}, {"Control plane", cur.ControlPlaneListenerName}}
	for _, k := range kinds {
		if k.name == "" {
			continue
		}
		if listenerNamed(cur.Listeners, k.name) != listenerNamed(next.Listeners, k.name) ||
			listenerNamed(cur.AdvertisedListeners, k.name) != listenerNamed(next.AdvertisedListeners, k.name) {
			return errorf("%s listener %s cannot be removed or changed dynamically, restart broker for update", k.kind, k.name)
		}
	}
	return nil
}

// DiffListeners says which listeners a broker moving from cur to next
// closes and which it binds: those whose name went or came, and those
// whose address changed (both closed and bound again), in next's order.
func DiffListeners(cur, next []Listener) (closed, bound []Listener) {
	for _, l := range cur {
		if listenerNamed(next, l.Name) != l {
			closed = append(closed, l)
		}
	}
	for _, l := range next {
		if listenerNamed(cur, l.Name) != l {
			bound = append(bound, l)
		}
	}
	return closed, bound
}

// listenerNamed is the listener called name in ls, the zero Listener if none.
func listenerNamed(ls []Listener, name string) Listener {
	if i := slices.IndexFunc(ls, func(l Listener) bool { return l.Name == name }); i >= 0 {
		return ls[i]
	}
	return Listener{}
}

// pick is the part of m with the given keys; nil when none are set.
func pick(m map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// drop is m without the given keys.
func drop(m map[string]string, keys []string) map[string]string {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// layered is b with the dynamic layers, the entries that fail validation
// on their own skipped and reported in errs; err is a cross-key rule the
// result breaks.
func (b *Broker) layered(clusterDefault, perBroker map[string]string) (nb *Broker, errs []error, err error) {
	nb = &Broker{explicit: b.explicit}
	nb.dynDefault, errs = validLayer(clusterDefault, false)
	var brokerErrs []error
	nb.dynBroker, brokerErrs = validLayer(perBroker, true)
	errs = append(errs, brokerErrs...)
	if err := nb.resolve(); err != nil {
		return nil, errs, err
	}
	return nb, errs, nil
}

// withoutListeners is WithDynamic's fallback when the layers' listeners
// break a rule with the static configuration (server.properties changed
// since they were written): the other dynamic keys still apply, as they
// would have before listeners were dynamic.
func (b *Broker) withoutListeners(clusterDefault, perBroker map[string]string, cause error) (*Broker, []error) {
	nb, errs, err := b.layered(drop(clusterDefault, listenerKeys), drop(perBroker, listenerKeys))
	errs = append(errs, fmt.Errorf("config: dynamic listener configs ignored: %w", cause))
	if err != nil {
		return b, append(errs, err)
	}
	return nb, errs
}

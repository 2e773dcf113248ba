package broker

// Listeners, bound at start and changed at run time as Kafka's
// DynamicListenerConfig and SocketServer.addListeners/removeListeners do
// (KIP-226): a write of listeners, advertised.listeners or
// listener.security.protocol.map to /config/brokers/<id> is checked as a
// whole (config.ValidateListenerUpdate) before it is stored; once this
// broker applies it (dynconfig.go), the listeners that went or moved are
// closed with their connections, the new ones bound and served, and when
// the endpoints changed the registration is rewritten in place (same
// session, same epoch): the controller sends every broker an UpdateMetadata
// with them (Kafka's BrokerModification). The write is answered after all
// that.
//
// ln.mu guards the bound listeners and the configuration they were bound
// for; reg.mu serializes registration writes (a new registration after a
// lost session, a rewrite after a listener change), each made with the
// endpoints of the moment. Lock order: regMu, then ln.mu.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/server"
)

// boundListener is one listener and the server bound for it.
type boundListener struct {
	cfg config.Listener
	srv *server.Server
}

// listeners are the broker's bound listeners.
type listeners struct {
	handler  server.Handler
	registry prometheus.Registerer

	mu     sync.Mutex
	cfg    *config.Broker  // the configuration bound; nil until listen
	bound  []boundListener // in the order of cfg.Listeners
	closed bool            // teardown: nothing is bound any more
}

// bind binds every listener of cfg (the current configuration, dynamic
// listeners included); serving starts with serveAll.
func (b *Broker) bind(cfg *config.Broker, h server.Handler, reg prometheus.Registerer) error {
	ln := &b.ln
	ln.mu.Lock()
	defer ln.mu.Unlock()
	ln.handler, ln.registry, ln.cfg = h, reg, cfg
	b.reconfigureConnLimits(nil, cfg)
	for _, l := range cfg.Listeners {
		srv, err := b.newServer(l)
		if err != nil {
			return err
		}
		ln.bound = append(ln.bound, boundListener{l, srv})
	}
	return nil
}

func (b *Broker) newServer(l config.Listener) (*server.Server, error) {
	srv, err := server.New(server.Config{
		Addr:            net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))),
		ListenerName:    l.Name,
		MaxRequestBytes: b.cfg.SocketRequestMaxBytes,
		IdleTimeout:     b.cfg.ConnectionsMaxIdle,
		Logger:          b.log.With("component", "server", "listener", l.Name),
		Handler:         b.ln.handler,
		Registerer:      b.ln.registry,
		Limits:          b.conns,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: listener %s: %w", l, err)
	}
	return srv, nil
}

// connLimitsConfig is what of a configuration the connection limits
// follow (comparable: a change of anything else leaves them, and the
// overrides' names unresolved again).
type connLimitsConfig struct {
	max, perIP, rate       int32
	overrides, interBroker string
	listeners              int
}

func connLimitsOf(cfg *config.Broker) connLimitsConfig {
	return connLimitsConfig{cfg.MaxConnections, cfg.MaxConnectionsPerIP, cfg.MaxConnectionCreationRate,
		cfg.MaxConnectionsPerIPOverrides, cfg.InterBrokerListenerName, len(cfg.Listeners)}
}

// reconfigureConnLimits applies cur's connection limits when they differ
// from prev's (nil: at start).
func (b *Broker) reconfigureConnLimits(prev, cur *config.Broker) {
	if prev != nil && connLimitsOf(prev) == connLimitsOf(cur) {
		return
	}
	c := connLimitsOf(cur)
	overrides, err := config.ConnectionsPerIPOverrides(c.overrides)
	if err != nil { // a name that no longer resolves: the limits stay as they were
		b.log.Warn("max.connections.per.ip.overrides not applied", "err", err)
		return
	}
	protected := "" // Kafka protects the inter-broker listener only beside others
	if c.listeners > 1 {
		protected = c.interBroker
	}
	b.conns.Set(server.ConnLimitSettings{Max: int(c.max), PerIP: int(c.perIP), Overrides: overrides,
		CreationRate: int(c.rate), Protected: protected})
}

// serveAll starts accepting on every bound listener.
func (b *Broker) serveAll() {
	b.ln.mu.Lock()
	defer b.ln.mu.Unlock()
	for _, bl := range b.ln.bound {
		b.serve(bl)
	}
}

func (b *Broker) serve(bl boundListener) {
	b.goRun(func() {
		if err := bl.srv.Serve(); err != nil {
			b.log.Error("listener stopped", "listener", bl.cfg.Name, "err", err)
		}
	})
}

// closeListeners closes every listener and its connections, for good.
func (b *Broker) closeListeners() []error {
	ln := &b.ln
	ln.mu.Lock()
	defer ln.mu.Unlock()
	ln.closed = true
	var errs []error
	for _, bl := range ln.bound {
		errs = append(errs, bl.srv.Close())
	}
	ln.bound = nil
	return errs
}

// reconfigureListeners moves the bound listeners to cur's (Kafka's
// DynamicListenerConfig.reconfigure): the ones that went or moved are
// closed first, then the new ones bound and served; a listener that
// cannot be bound is logged and left out (tried again at the next
// change). When the endpoints changed, the registration is rewritten.
func (b *Broker) reconfigureListeners(cur *config.Broker) {
	ln := &b.ln
	ln.mu.Lock()
	if ln.closed || ln.cfg == nil {
		ln.mu.Unlock()
		return
	}
	before := b.endpointsLocked()
	have := make([]config.Listener, len(ln.bound))
	for i, bl := range ln.bound {
		have[i] = bl.cfg
	}
	closed, bound := config.DiffListeners(have, cur.Listeners)
	for _, l := range closed {
		i := slices.IndexFunc(ln.bound, func(bl boundListener) bool { return bl.cfg == l })
		if err := ln.bound[i].srv.Close(); err != nil {
			b.log.Warn("closing listener", "listener", l, "err", err)
		}
		ln.bound = slices.Delete(ln.bound, i, i+1)
		b.log.Info("listener closed", "listener", l)
	}
	for _, l := range bound {
		srv, err := b.newServer(l)
		if err != nil {
			b.log.Error("dynamic listener not bound", "listener", l, "err", err)
			continue
		}
		bl := boundListener{l, srv}
		ln.bound = append(ln.bound, bl)
		b.serve(bl)
		b.log.Info("listener bound", "listener", l, "addr", srv.Addr())
	}
	slices.SortStableFunc(ln.bound, func(x, y boundListener) int {
		return slices.IndexFunc(cur.Listeners, func(l config.Listener) bool { return l.Name == x.cfg.Name }) -
			slices.IndexFunc(cur.Listeners, func(l config.Listener) bool { return l.Name == y.cfg.Name })
	})
	ln.cfg = cur
	changed := !slices.Equal(before, b.endpointsLocked())
	ln.mu.Unlock()
	if changed {
		b.updateRegistration()
	}
}

// updateRegistration rewrites this broker's registration with its current
// endpoints. Without a live registration (the session ended) there is
// nothing to do: the next registration carries them.
func (b *Broker) updateRegistration() {
	b.regMu.Lock()
	defer b.regMu.Unlock()
	b.sessMu.Lock()
	sess := b.sess
	b.sessMu.Unlock()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), registerCallTimeout)
	defer cancel()
	eps := b.endpoints()
	err := b.md.UpdateBrokerRegistration(ctx, sess, metadata.NewBroker(b.nodeID, eps, b.cfg.BrokerRack, time.Now()))
	switch {
	case errors.Is(err, metadata.ErrNotRegistered):
		b.log.Info("endpoints changed while not registered; the next registration carries them", "endpoints", eps)
	case err != nil:
		b.log.Error("registration not updated with the new endpoints", "endpoints", eps, "err", err)
	default:
		b.log.Info("registration updated", "endpoints", eps)
	}
}

// endpoints are this broker's advertised listeners, the bound address of
// its listener of the same name filling in what one leaves out (no host:
// the bound IP, "localhost" if that is a wildcard; port 0: the bound port).
// A listener that could not be bound is not advertised.
func (b *Broker) endpoints() []metadata.Endpoint {
	b.ln.mu.Lock()
	defer b.ln.mu.Unlock()
	return b.endpointsLocked()
}

func (b *Broker) endpointsLocked() []metadata.Endpoint {
	out := make([]metadata.Endpoint, 0, len(b.ln.bound))
	for _, a := range b.ln.cfg.AdvertisedListeners {
		i := slices.IndexFunc(b.ln.bound, func(bl boundListener) bool { return bl.cfg.Name == a.Name })
		if i < 0 {
			continue
		}
		e := metadata.Endpoint{Listener: a.Name, Host: a.Host, Port: a.Port, Protocol: a.Protocol}
		if tcp, ok := b.ln.bound[i].srv.Addr().(*net.TCPAddr); ok {
			if e.Host == "" {
				e.Host = tcp.IP.String()
				if tcp.IP.IsUnspecified() {
					e.Host = "localhost"
				}
			}
			if e.Port == 0 {
				e.Port = int32(tcp.Port)
			}
		}
		out = append(out, e)
	}
	return out
}

// Addr is the address the first listener is bound to.
func (b *Broker) Addr() net.Addr {
	b.ln.mu.Lock()
	defer b.ln.mu.Unlock()
	return b.ln.bound[0].srv.Addr()
}

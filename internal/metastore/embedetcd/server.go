package embedetcd

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Defaults for Config fields left empty.
const (
	DefaultName      = "samsa-store"
	DefaultClientURL = "http://127.0.0.1:2379"
	DefaultPeerURL   = "http://127.0.0.1:2380"
	// StartTimeout bounds how long Start waits for the server to be ready.
	StartTimeout = 60 * time.Second
)

// Limits of the embedded server, above etcd's defaults (128 operations,
// 1.5 MiB): the controller writes thousands of partition states per
// election, and fewer, larger transactions mean fewer commits. Clients
// must be told (etcdstore.ConnectMaxOps).
const (
	MaxTxnOps       = 2048
	MaxRequestBytes = 8 << 20
)

// Config describes one member. Empty fields take the defaults; an empty
// InitialCluster is a single-member cluster of this member.
type Config struct {
	Name      string
	DataDir   string
	ClientURL string // listen and advertise, e.g. http://127.0.0.1:2379
	PeerURL   string // listen and advertise, e.g. http://127.0.0.1:2380
	// AdvertiseClientURL and AdvertisePeerURL are what other members and
	// clients dial (empty: the listen URL); set them when listening on a
	// wildcard address.
	AdvertiseClientURL  string
	AdvertisePeerURL    string
	InitialCluster      string // name=peerURL,... (etcd's --initial-cluster)
	InitialClusterState string // "new" (default) or "existing"
	Logger              *slog.Logger
	// AutoCompactionRetention is the history kept (periodic mode); 0: 5m.
	AutoCompactionRetention time.Duration
}

// Server is a running embedded etcd member.
type Server struct {
	e         *embed.Etcd
	endpoints []string
	closing   *atomic.Bool // Close has begun (zap.go)
}

// Start starts the member and waits until it serves clients.
func Start(c Config) (*Server, error) {
	cfg, err := c.embedConfig()
	if err != nil {
		return nil, err
	}
	closing := new(atomic.Bool)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(newZap(c.Logger, closing))
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedetcd: start %s: %w", cfg.Name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedetcd: %s failed while starting: %w", cfg.Name, err)
	case <-time.After(StartTimeout):
		e.Close()
		return nil, fmt.Errorf("embedetcd: %s not ready after %v (does the initial cluster have a quorum?)", cfg.Name, StartTimeout)
	}
	s := &Server{e: e, closing: closing}
	for _, u := range cfg.AdvertiseClientUrls {
		s.endpoints = append(s.endpoints, u.Host)
	}
	return s, nil
}

func (c Config) embedConfig() (*embed.Config, error) {
	if c.DataDir == "" {
		return nil, errors.New("embedetcd: data dir required")
	}
	cfg := embed.NewConfig()
	cfg.Name = or(c.Name, DefaultName)
	cfg.Dir = c.DataDir
	cu, err := url.Parse(or(c.ClientURL, DefaultClientURL))
	if err != nil {
		return nil, fmt.Errorf("embedetcd: client url: %w", err)
	}
	pu, err := url.Parse(or(c.PeerURL, DefaultPeerURL))
	if err != nil {
		return nil, fmt.Errorf("embedetcd: peer url: %w", err)
	}
	acu, err := url.Parse(or(c.AdvertiseClientURL, cu.String()))
	if err != nil {
		return nil, fmt.Errorf("embedetcd: advertised client url: %w", err)
	}
	apu, err := url.Parse(or(c.AdvertisePeerURL, pu.String()))
	if err != nil {
		return nil, fmt.Errorf("embedetcd: advertised peer url: %w", err)
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*acu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*apu}
	cfg.InitialCluster = or(c.InitialCluster, cfg.Name+"="+apu.String())
	cfg.ClusterState = or(c.InitialClusterState, embed.ClusterStateFlagNew)
	if cfg.ClusterState != embed.ClusterStateFlagNew && cfg.ClusterState != embed.ClusterStateFlagExisting {
		return nil, fmt.Errorf("embedetcd: initial cluster state %q: want new or existing", cfg.ClusterState)
	}
	retention := c.AutoCompactionRetention
	if retention <= 0 {
		retention = 5 * time.Minute
	}
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = retention.String()
	cfg.QuotaBackendBytes = 8 << 30
	cfg.MaxTxnOps, cfg.MaxRequestBytes = MaxTxnOps, MaxRequestBytes
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	// etcd's authentication stays off (the store is Samsa's own): no auth
	// tokens, rather than etcd's default simple ones, which it warns
	// about at every start.
	cfg.AuthToken = ""
	return cfg, nil
}

// Endpoints are the client endpoints (host:port) for etcdstore.Connect.
func (s *Server) Endpoints() []string { return append([]string(nil), s.endpoints...) }

// Err delivers a fatal server error, if one happens while running.
func (s *Server) Err() <-chan error { return s.e.Err() }

// Close stops the member. Close clients first.
func (s *Server) Close() {
	s.closing.Store(true)
	s.e.Close()
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

package zkstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// DefaultMaxTxnOps is the most cmps and ops one Txn carries: with Samsa's
// largest values (state chunks of a few KiB) a multi stays far below
// jute.maxbuffer.
const DefaultMaxTxnOps = 64

// DefaultMaxBuffer is ZooKeeper's default jute.maxbuffer (1 MiB), the
// largest request a server accepts.
const DefaultMaxBuffer = 1 << 20

// Config says how to reach an ensemble (Kafka's zookeeper.* settings).
type Config struct {
	Servers []string // host:port
	Chroot  string   // "" or "/path": every key lives under it
	// SessionTimeout is the store connection's own session timeout
	// (zookeeper.session.timeout.ms; 0: 18 s).
	SessionTimeout time.Duration
	// ConnectionTimeout bounds the wait for the first session
	// (zookeeper.connection.timeout.ms; 0: SessionTimeout).
	ConnectionTimeout time.Duration
	// MaxInFlight is how many requests a List or a watch's walk pipelines
	// (zookeeper.max.in.flight.requests; 0: 10).
	MaxInFlight int
	// MaxBuffer is the servers' jute.maxbuffer (0: 1 MiB).
	MaxBuffer int
	Logger    *slog.Logger // nil: discard
}

// Store is a metastore.Store over one ZooKeeper connection (and one more
// per session).
type Store struct {
	cfg    Config
	root   string // chroot, "" for none
	conn   *zk.Conn
	lg     *slog.Logger
	maxOps int
	closed atomic.Bool

	mu        sync.Mutex
	sessions  map[metastore.SessionID]*session
	watchers  map[*watcher]struct{}
	baselines []baseline // keys of the last Lists, newest last
}

var _ metastore.Store = (*Store)(nil)

// ParseConnect splits Kafka's zookeeper.connect "host:port[,host:port...][/chroot]"
// into servers and a chroot ("" if none; never ending in "/").
func ParseConnect(s string) (servers []string, chroot string, err error) {
	s = strings.TrimSpace(s)
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], strings.TrimRight(s[i:], "/")
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			return nil, "", fmt.Errorf("zkstore: connect string %q: server %q is not host:port", s, h)
		}
		servers = append(servers, h)
	}
	if strings.Contains(chroot, "//") {
		return nil, "", fmt.Errorf("zkstore: connect string %q: bad chroot %q", s, chroot)
	}
	return servers, chroot, nil
}

// Connect opens a session with the ensemble, waits for it up to the
// connection timeout and creates the chroot if missing.
func Connect(cfg Config) (*Store, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("zkstore: no servers")
	}
	if cfg.Chroot != "" && (!strings.HasPrefix(cfg.Chroot, "/") || strings.HasSuffix(cfg.Chroot, "/")) {
		return nil, fmt.Errorf("zkstore: chroot %q must start and not end with /", cfg.Chroot)
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 18 * time.Second
	}
	if cfg.ConnectionTimeout <= 0 {
		cfg.ConnectionTimeout = cfg.SessionTimeout
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 10
	}
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = DefaultMaxBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{
		cfg: cfg, root: cfg.Chroot, lg: cfg.Logger, maxOps: DefaultMaxTxnOps,
		sessions: map[metastore.SessionID]*session{}, watchers: map[*watcher]struct{}{},
	}
	conn, err := s.dial(cfg.SessionTimeout, s.route)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	if err := s.ensureDirs(s.rootPath() + "/x"); err != nil {
		conn.Close()
		return nil, s.wrap("create chroot "+s.root, err)
	}
	return s, nil
}

// dial connects with timeout and waits for the first session; onEvent sees
// every event of the connection, synchronously, in order.
func (s *Store) dial(timeout time.Duration, onEvent func(zk.Event)) (*zk.Conn, error) {
	ready := make(chan struct{})
	var once sync.Once
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			once.Do(func() { close(ready) })
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	conn, _, err := zk.Connect(s.cfg.Servers, timeout, zk.WithEventCallback(cb),
		zk.WithLogger(zkLogger{s.lg}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("zkstore: connect %v: %w", s.cfg.Servers, err)
	}
	select {
	case <-ready:
		return conn, nil
	case <-time.After(s.cfg.ConnectionTimeout):
		conn.Close()
		return nil, fmt.Errorf("zkstore: connect %v: no session within %v", s.cfg.Servers, s.cfg.ConnectionTimeout)
	}
}

// zkLogger sends the client library's log lines to slog at debug level.
type zkLogger struct{ lg *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.lg.Debug("zkstore: " + fmt.Sprintf(format, args...))
}

// Conn is the store's own connection (for tools and tests).
func (s *Store) Conn() *zk.Conn { return s.conn }

// MaxTxnOps implements metastore.Store.
func (s *Store) MaxTxnOps() int { return s.maxOps }

// Close ends the store's sessions (their keys vanish at once) and closes
// its connection; watches end with ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	watchers := make([]*watcher, 0, len(s.watchers))
	for w := range s.watchers {
		watchers = append(watchers, w)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.Close()
	}
	for _, w := range watchers {
		w.notify(notice{closed: true})
	}
	s.conn.Close()
	return nil
}

// rootPath is the chroot's znode ("/" without a chroot).
func (s *Store) rootPath() string {
	if s.root == "" {
		return "/"
	}
	return s.root
}

// path maps a key to its znode.
func (s *Store) path(key string) (string, error) {
	if !strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") || strings.Contains(key, "//") {
		return "", fmt.Errorf("zkstore: key %q is no znode path", key)
	}
	return s.root + key, nil
}

// key maps a znode back to its key.
func (s *Store) key(path string) string { return path[len(s.root):] }

// internal reports znodes that are no keys whatever their data: ZooKeeper's
// own /zookeeper tree when there is no chroot.
func (s *Store) internal(path string) bool {
	return s.root == "" && (path == "/zookeeper" || strings.HasPrefix(path, "/zookeeper/"))
}

func parent(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

func child(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// ensureDirs creates the missing ancestors of path, with null data.
func (s *Store) ensureDirs(path string) error {
	var missing []string
	for p := parent(path); p != "/"; p = parent(p) {
		ok, _, err := s.conn.Exists(p)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if _, err := s.conn.Create(missing[i], nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// Get implements metastore.Store.
func (s *Store) Get(ctx context.Context, key string) (metastore.KV, bool, error) {
	if err := s.check(ctx); err != nil {
		return metastore.KV{}, false, err
	}
	p, err := s.path(key)
	if err != nil {
		return metastore.KV{}, false, err
	}
	data, st, err := s.conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) || (err == nil && data == nil) {
		return metastore.KV{}, false, nil
	}
	if err != nil {
		return metastore.KV{}, false, s.wrap("get "+key, err)
	}
	return s.toKV(p, data, st), true, nil
}

func (s *Store) toKV(path string, data []byte, st *zk.Stat) metastore.KV {
	return metastore.KV{
		Key: s.key(path), Value: data, Version: st.Mzxid, Created: st.Czxid,
		Session: metastore.SessionID(st.EphemeralOwner),
	}
}

// check fails fast on a closed store or an ended context.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("zkstore: %w", metastore.ErrClosed)
	}
	return ctx.Err()
}

// wrap maps client errors to metastore sentinels and adds the package
// prefix.
func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var sentinel error
	switch {
	case s.closed.Load() || errors.Is(err, zk.ErrClosing):
		sentinel = metastore.ErrClosed
	case errors.Is(err, zk.ErrSessionExpired):
		sentinel = metastore.ErrSessionExpired
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer):
		// No answer: the connection dropped with the request in flight
		// (which may have been applied), or no server could be reached.
		sentinel = metastore.ErrUnavailable
	}
	if sentinel != nil {
		return fmt.Errorf("zkstore: %s: %w (%w)", what, sentinel, err)
	}
	return fmt.Errorf("zkstore: %s: %w", what, err)
}

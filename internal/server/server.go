package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// Kafka's defaults for socket.request.max.bytes and connections.max.idle.ms.
const (
	DefaultMaxRequestBytes = 104857600
	DefaultIdleTimeout     = 10 * time.Minute
)

// Handler serves decoded requests.
type Handler interface {
	// Handle serves one request. A nil response means no response is
	// written (Produce with acks=0). A non-nil error is logged and closes
	// the connection. The server sets the response's version to the
	// request's. ctx is cancelled when the connection closes or the server
	// stops; Handle must return soon after.
	Handle(ctx context.Context, c *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error)
}

// Config configures a Server. Zero values take Kafka's defaults.
type Config struct {
	Addr            string       // "host:port"; ":0" picks a free port
	ListenerName    string       // the Kafka listener name (PLAINTEXT, INTERNAL…) this server is bound for
	Listener        net.Listener // optional; overrides Addr
	MaxRequestBytes int32        // socket.request.max.bytes
	IdleTimeout     time.Duration
	Logger          *slog.Logger // nil: discard
	Handler         Handler
	Registerer      prometheus.Registerer // nil: metrics are not registered
	// Limits, shared by a broker's servers, bound their connections
	// (connlimits.go); nil: none.
	Limits *ConnLimits
}

// Server accepts Kafka client connections. See the package doc.
type Server struct {
	cfg     Config
	log     *slog.Logger
	ln      net.Listener
	metrics *metrics
	ctx     context.Context // cancelled by Close; parent of every Conn's
	cancel  context.CancelFunc
	nextID  atomic.Uint64

	mu      sync.Mutex
	closed  bool
	serving bool
	conns   map[uint64]*Conn
	wg      sync.WaitGroup // Serve and every connection

	closeOnce sync.Once
	closeErr  error
}

// New validates cfg, registers the metrics and starts listening. Serve
// starts accepting.
func New(cfg Config) (*Server, error) {
	if cfg.Handler == nil {
		return nil, errors.New("server: nil Handler")
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg: cfg, log: log, ln: ln, metrics: m, ctx: ctx, cancel: cancel,
		conns: make(map[uint64]*Conn),
	}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts connections until Close and then returns nil. It returns an
// error if it is already running or the listener fails for good.
func (s *Server) Serve() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	if s.serving {
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	s.serving = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	var backoff time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("server: accept: %w", err)
			}
			// Transient (e.g. out of file descriptors): back off as
			// net/http does, and keep serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			if !s.sleep(backoff) {
				return nil
			}
			continue
		}
		backoff = 0
		wire.CapRetransmits(nc)
		if s.admit(nc) {
			s.startConn(nc)
		}
	}
}

// admit counts nc against the connection limits, waiting for a slot under
// max.connections; it closes nc and reports false when its address has
// its maximum or the server closed meanwhile.
func (s *Server) admit(nc net.Conn) bool {
	l := s.cfg.Limits
	if l == nil {
		return true
	}
	addr := remoteAddr(nc)
	ok, limit := l.admit(s.ctx, addr, s.cfg.ListenerName)
	if !ok {
		if s.ctx.Err() == nil {
			s.log.Info(fmt.Sprintf("Rejected connection from %s, address already has the configured maximum of %d connections.", addr, limit),
				"remote", nc.RemoteAddr().String())
		}
		nc.Close()
	}
	return ok
}

// release uncounts nc from the connection limits.
func (s *Server) release(nc net.Conn) {
	if s.cfg.Limits != nil {
		s.cfg.Limits.release(remoteAddr(nc))
	}
}

// Close stops accepting, cancels every handler context, closes every
// connection and waits for Serve and all connection goroutines to return.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := make([]*Conn, 0, len(s.conns))
		for _, c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()

		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = fmt.Errorf("server: closing listener: %w", err)
		}
		s.cancel()
		for _, c := range conns {
			c.nc.Close()
		}
		s.wg.Wait()
	})
	return s.closeErr
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// sleep waits d, or less if the server closes; it reports whether the
// server is still open.
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// startConn registers nc and starts its goroutine, unless the server closed
// meanwhile.
func (s *Server) startConn(nc net.Conn) {
	c := &Conn{ID: s.nextID.Add(1), Remote: nc.RemoteAddr(), Local: nc.LocalAddr(), Listener: s.cfg.ListenerName, nc: nc}
	c.touch()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		s.release(nc)
		return
	}
	s.conns[c.ID] = c
	s.wg.Add(1)
	s.mu.Unlock()

	go func() {
		defer s.wg.Done()
		s.serveConn(c)
		s.mu.Lock()
		delete(s.conns, c.ID)
		s.mu.Unlock()
		s.release(nc)
	}()
}

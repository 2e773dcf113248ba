package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// queueDepth is how many decoded requests may wait while one is handled.
// Each may hold up to MaxRequestBytes, so it stays small.
const queueDepth = 4

const ioBufferSize = 64 << 10

// Conn is one client connection, as a Handler sees it.
type Conn struct {
	ID     uint64 // unique within one Server, from 1
	Remote net.Addr
	Local  net.Addr
	// Listener is the listener name of the server that accepted the
	// connection (Config.ListenerName): Metadata answers with that
	// listener's addresses, as Kafka does.
	Listener string

	nc         net.Conn
	lastActive atomic.Int64 // unix nanoseconds of the last byte read or written
	inFlight   atomic.Int32 // requests read and not yet handled

	// Client quotas (throttle.go). requestSize and throttle belong to the
	// handling goroutine.
	requestSize int
	throttle    time.Duration
	mutedUntil  atomic.Int64 // unix nanoseconds
}

func (c *Conn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

// idle reports whether c has had nothing in flight and no traffic for d.
func (c *Conn) idle(d time.Duration) bool {
	return c.inFlight.Load() == 0 && time.Since(time.Unix(0, c.lastActive.Load())) >= d
}

// inbound is one frame as the reader saw it: a request or the error that
// ends the connection.
type inbound struct {
	hdr   wire.RequestHeader
	req   kmsg.Request
	err   error
	read  time.Time
	size  int    // bytes of the frame
	frame []byte // pooled frame to release once answered, nil if none
}

// connLoop holds one connection's goroutines together.
type connLoop struct {
	s      *Server
	c      *Conn
	log    *slog.Logger
	ctx    context.Context // handler context
	cancel context.CancelFunc
	reqs   chan inbound // reader → handling loop
	out    *output      // handling loop → socket (out.go)
	after  []func()     // AfterResponse functions of the request being handled
	// rc is the socket, for sendfile, if the connection is a plain TCP
	// one (sections.go); secs and locate are what the handler attached
	// to the response it is making (AttachSections).
	rc     syscall.RawConn
	secs   []Section
	locate Locator
	// later is the finish the handler passed to Later; laters counts the
	// Later answers not yet complete, all of requests of key laterKey
	// (later.go).
	later    func() bool
	laters   sync.WaitGroup
	laterKey int16
}

// serveConn runs one connection to its end: the handling loop runs here, the
// reader and writer beside it; all three have returned when it does.
func (s *Server) serveConn(c *Conn) {
	s.metrics.active.Inc()
	defer s.metrics.active.Dec()
	ctx, cancel := context.WithCancel(s.ctx)
	l := &connLoop{
		s: s, c: c, cancel: cancel,
		log:      s.log.With("conn", c.ID, "remote", c.Remote.String()),
		reqs:     make(chan inbound, queueDepth),
		rc:       rawConnOf(c.nc),
		laterKey: -1,
	}
	l.ctx = context.WithValue(ctx, loopKey{}, l)
	l.out = newOutput(l)
	var reader sync.WaitGroup
	reader.Go(l.read)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		l.out.run()
	}()

	l.handleAll()
	l.out.close()
	<-writerDone // responses already queued are written first
	cancel()
	c.nc.Close()
	reader.Wait()
}

// read decodes frames into l.reqs until the first error, which it passes on.
// The peer going away or the idle timeout cancels the connection at once.
func (l *connLoop) read() {
	defer close(l.reqs)
	cr := &connReader{src: idleReader{l.c, l.s.cfg.IdleTimeout}}
	defer cr.release()
	for l.waitUnmuted() {
		in := inbound{}
		frame, pooled, err := cr.readFrame(l.s.cfg.MaxRequestBytes)
		in.read, in.size = time.Now(), len(frame)
		if pooled {
			in.frame = frame
		}
		switch {
		case err != nil:
			in.hdr, in.err = wire.RequestHeader{Key: -1, Version: -1}, err
		case len(frame) < 8: // not even a header to log
			in.hdr, in.err = wire.RequestHeader{Key: -1, Version: -1}, fmt.Errorf("%w: %d-byte frame", wire.ErrMalformed, len(frame))
		default:
			l.c.inFlight.Add(1)
			in.hdr, in.req, in.err = wire.ParseRequest(frame)
		}
		if in.err != nil && !isBadInput(in.err) {
			l.cancel() // the peer is gone, idle, or we closed the socket
		}
		select {
		case l.reqs <- in:
		case <-l.ctx.Done():
			if in.frame != nil {
				releaseFrame(in.frame)
			}
			return
		}
		if in.err != nil && !unsupportedApiVersions(in) {
			return
		}
	}
}

// handleAll serves requests in arrival order until one ends the connection.
func (l *connLoop) handleAll() {
	for l.waitUnmuted() {
		select {
		case in, ok := <-l.reqs:
			if !ok || !l.handle(in) {
				return
			}
		case <-l.ctx.Done():
			return
		}
	}
}

// handle serves one inbound and reports whether the connection stays open.
func (l *connLoop) handle(in inbound) bool {
	if in.frame != nil {
		defer releaseFrame(in.frame) // after runAfter: the request is done with
	}
	if in.err != nil && !unsupportedApiVersions(in) {
		l.reportReadError(in)
		return false
	}
	defer l.c.inFlight.Add(-1)
	defer l.runAfter()     // also when the handler fails or answers nothing
	defer l.dropSections() // those the response did not take
	l.awaitLaters(in)
	var resp kmsg.Response
	handled := time.Now()
	if in.err != nil {
		// Kafka answers with a v0 body, whatever version was asked.
		resp = wire.ApiVersionsResponse(0, kerr.UnsupportedVersion.Code)
	} else {
		start := handled
		l.s.metrics.observePhase(in.hdr.Key, phaseRequestQueue, start.Sub(in.read))
		var err error
		resp, err = l.callHandler(in)
		handled = time.Now()
		l.s.metrics.observePhase(in.hdr.Key, phaseLocal, handled.Sub(start))
		finish := l.later
		l.later = nil
		if err != nil {
			l.s.metrics.observe(in.hdr.Key, handled.Sub(in.read))
			l.logHandlerError(in, err)
			return false
		}
		if resp != nil {
			resp.SetVersion(in.hdr.Version)
		}
		if finish != nil {
			ok := l.answerLater(in, resp, finish, handled)
			if ok && l.c.throttle > 0 {
				// Kafka mutes a throttled client's channel once the response
				// is sent: nothing more is handled before this answer.
				l.drainLaters()
			}
			l.mute()
			return ok
		}
	}
	l.c.touch()
	l.s.metrics.observe(in.hdr.Key, handled.Sub(in.read))
	defer l.mute() // once the response is sent (queued)
	if resp == nil {
		return true
	}
	l.s.metrics.countErrors(in.hdr.Key, resp)
	f, err := l.encodeFrame(wire.AppendResponse(getResponseBuffer(), in.hdr, resp), resp)
	if err != nil {
		l.logHandlerError(in, err)
		return false
	}
	f.timing = timing{key: in.hdr.Key, read: in.read, ready: time.Now()}
	return l.out.send(f)
}

// errPanic marks a recovered Handler panic.
var errPanic = errors.New("server: handler panicked")

func (l *connLoop) callHandler(in inbound) (resp kmsg.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())
		}
	}()
	l.c.requestSize, l.c.throttle = in.size, 0
	resp, err = l.s.cfg.Handler.Handle(l.ctx, l.c, in.hdr, in.req)
	if err == nil && resp != nil && resp.Key() != in.hdr.Key {
		err = fmt.Errorf("server: handler answered %s with a %s response",
			kmsg.NameForKey(in.hdr.Key), kmsg.NameForKey(resp.Key()))
	}
	return resp, err
}

func (l *connLoop) reportReadError(in inbound) {
	switch {
	case isBadInput(in.err):
		l.log.Warn("bad request; closing connection", "key", in.hdr.Key, "version", in.hdr.Version,
			"api", kmsg.NameForKey(in.hdr.Key), "reason", in.err)
	case l.s.ctx.Err() != nil || errors.Is(in.err, net.ErrClosed):
		// Closed by us.
	default:
		l.log.Debug("connection closed", "reason", in.err)
	}
}

func (l *connLoop) logHandlerError(in inbound, err error) {
	level := slog.LevelWarn
	if errors.Is(err, errPanic) {
		level = slog.LevelError
	}
	l.log.Log(context.Background(), level, "handler failed; closing connection", "key", in.hdr.Key,
		"version", in.hdr.Version, "api", kmsg.NameForKey(in.hdr.Key), "reason", err)
}

// isBadInput tells the peer's protocol mistakes from the connection ending.
func isBadInput(err error) bool {
	return errors.Is(err, wire.ErrFrameTooLarge) || errors.Is(err, wire.ErrMalformed) ||
		errors.Is(err, wire.ErrUnknownKey) || errors.Is(err, wire.ErrUnsupportedVersion) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

func unsupportedApiVersions(in inbound) bool {
	return in.hdr.Key == int16(kmsg.ApiVersions) && errors.Is(in.err, wire.ErrUnsupportedVersion)
}

// idleReader reads from the connection, failing with a timeout only once the
// connection has been idle (nothing in flight, no traffic) for d.
type idleReader struct {
	c *Conn
	d time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	for {
		r.c.nc.SetReadDeadline(time.Now().Add(r.d))
		n, err := r.c.nc.Read(p)
		if n > 0 {
			r.c.touch()
			return n, nil
		}
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() && !r.c.idle(r.d) {
			continue
		}
		return n, err
	}
}

package zkstore

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// session is a ZooKeeper session on a connection of its own: the keys
// bound to it are ephemeral znodes created over that connection.
type session struct {
	s    *Store
	id   metastore.SessionID
	ttl  time.Duration
	conn *zk.Conn
	done chan struct{}

	mu      sync.Mutex
	lost    *time.Timer // runs while the connection is down
	lostGen int         // which arming of lost is current
	waiting bool        // logged: servers reachable, not serving
	over    bool        // ended: Done is closed or about to be
}

// NewSession implements metastore.Store: a session of timeout ttl (the
// servers bound it to [2, 20] tickTimes).
func (s *Store) NewSession(ctx context.Context, ttl time.Duration) (metastore.Session, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	ss := &session{s: s, ttl: ttl, done: make(chan struct{})}
	conn, err := s.dial(ttl, ss.onEvent)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	ss.conn, ss.id = conn, metastore.SessionID(conn.SessionID())
	over := ss.over
	ss.mu.Unlock()
	if over {
		conn.Close()
		return nil, fmt.Errorf("zkstore: new session: %w", metastore.ErrSessionExpired)
	}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	if s.closed.Load() {
		ss.Close()
		return nil, fmt.Errorf("zkstore: new session: %w", metastore.ErrClosed)
	}
	s.lg.Debug("zkstore: session started", "session", fmt.Sprintf("%#x", int64(ss.id)), "ttl", ttl)
	return ss, nil
}

// session returns the live session id, or ErrSessionExpired.
func (s *Store) session(id metastore.SessionID) (*session, error) {
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil || ss.ended() {
		return nil, fmt.Errorf("zkstore: session %#x: %w", int64(id), metastore.ErrSessionExpired)
	}
	return ss, nil
}

// onEvent runs on the connection's receive goroutine: it must not block.
func (ss *session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch ev.State {
	case zk.StateExpired:
		ss.endLocked("expired")
	case zk.StateDisconnected:
		if ss.lost == nil && !ss.over && ss.conn != nil {
			ss.armLostLocked(ss.ttl)
		}
	case zk.StateHasSession:
		if ss.lost != nil {
			ss.lost.Stop()
			ss.lost = nil
			ss.lostGen++
		}
		ss.waiting = false
	}
}

func (ss *session) armLostLocked(after time.Duration) {
	ss.lostGen++
	gen := ss.lostGen
	ss.lost = time.AfterFunc(after, func() { ss.checkLost(gen) })
}

// checkLost runs once the connection has been down for the session
// timeout. A server that can expire the session (one in a quorum) and
// that we reach would have taken our reconnection, or told us the session
// expired. So if no server is reachable at all, this client is cut off and
// the ensemble has expired the session by now (the client would only
// learn it on reconnecting): the session ends. If some are reachable but
// none serves, the ensemble has lost its quorum, and then no server
// expires sessions: the next leader gives each a full timeout again.
// The session goes on, as a Kafka broker's does while ZooKeeper is down,
// and is checked again a third of the timeout later.
func (ss *session) checkLost(gen int) {
	reachable := ss.s.anyServerReachable(min(ss.ttl/3, time.Second))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.over || gen != ss.lostGen {
		return // reconnected, or ended, meanwhile
	}
	if !reachable {
		ss.endLocked("connection lost for the session timeout, no server reachable")
		return
	}
	if !ss.waiting {
		ss.waiting = true
		ss.s.lg.Warn("zkstore: servers reachable but none serving for the session timeout (no quorum): keeping the session",
			"session", fmt.Sprintf("%#x", int64(ss.id)))
	}
	ss.armLostLocked(ss.ttl / 3)
}

// anyServerReachable reports whether a TCP connection to some server of
// the ensemble opens within timeout each.
func (s *Store) anyServerReachable(timeout time.Duration) bool {
	for _, addr := range s.cfg.Servers {
		if c, err := net.DialTimeout("tcp", addr, timeout); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// endLocked marks the session ended and closes its connection in the
// background (Close waits for the receive goroutine that may be calling).
func (ss *session) endLocked(why string) {
	if ss.over {
		return
	}
	ss.over = true
	if ss.lost != nil {
		ss.lost.Stop()
	}
	if ss.conn == nil { // still dialing: NewSession fails
		return
	}
	ss.s.lg.Info("zkstore: session ended", "session", fmt.Sprintf("%#x", int64(ss.id)), "why", why)
	ss.forget()
	close(ss.done)
	go ss.conn.Close()
}

func (ss *session) forget() {
	ss.s.mu.Lock()
	if ss.s.sessions[ss.id] == ss {
		delete(ss.s.sessions, ss.id)
	}
	ss.s.mu.Unlock()
}

func (ss *session) ended() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.over
}

func (ss *session) ID() metastore.SessionID { return ss.id }
func (ss *session) Done() <-chan struct{}   { return ss.done }

// Close ends the session: the server deletes its ephemeral znodes before
// it answers.
func (ss *session) Close() error {
	ss.mu.Lock()
	if ss.over {
		ss.mu.Unlock()
		<-ss.done
		return nil
	}
	ss.over = true
	if ss.lost != nil {
		ss.lost.Stop()
	}
	ss.mu.Unlock()
	ss.forget()
	ss.conn.Close()
	close(ss.done)
	return nil
}

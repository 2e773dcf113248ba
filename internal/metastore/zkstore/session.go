package zkstore

import (
	"context"
	"fmt"
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

	mu   sync.Mutex
	lost *time.Timer // runs while the connection is down
	over bool        // ended: Done is closed or about to be
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
			// The server expires the session after ttl without us; the
			// client would only learn it on reconnecting.
			ss.lost = time.AfterFunc(ss.ttl, func() {
				ss.mu.Lock()
				defer ss.mu.Unlock()
				ss.endLocked("connection lost for the session timeout")
			})
		}
	case zk.StateHasSession:
		if ss.lost != nil {
			ss.lost.Stop()
			ss.lost = nil
		}
	}
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

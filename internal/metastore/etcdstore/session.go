package etcdstore

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// session is a lease kept alive by the client.
type session struct {
	s      *Store
	id     clientv3.LeaseID
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// NewSession implements metastore.Store: a lease of ttl rounded up to whole
// seconds (the server raises it to its minimum, about 2 s by default).
func (s *Store) NewSession(ctx context.Context, ttl time.Duration) (metastore.Session, error) {
	secs := int64((ttl + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	grant, err := s.cli.Grant(ctx, secs)
	if err != nil {
		return nil, s.wrap("grant lease", err)
	}
	kctx, cancel := context.WithCancel(context.Background())
	ka, err := s.cli.KeepAlive(kctx, grant.ID)
	if err != nil {
		cancel()
		return nil, s.wrap("keep lease alive", err)
	}
	ss := &session{s: s, id: grant.ID, cancel: cancel, done: make(chan struct{})}
	go ss.run(ka)
	return ss, nil
}

// run drains keep-alive responses; the channel closes when the lease is
// gone, the keep-alive has failed for a TTL, or the client closes.
func (ss *session) run(ka <-chan *clientv3.LeaseKeepAliveResponse) {
	for range ka {
	}
	ss.cancel()
	close(ss.done)
	ss.s.lg.Debug("etcdstore: session ended", "lease", int64(ss.id))
}

func (ss *session) ID() metastore.SessionID { return metastore.SessionID(ss.id) }
func (ss *session) Done() <-chan struct{}   { return ss.done }

// Close revokes the lease (its keys vanish at once) and stops the
// keep-alive.
func (ss *session) Close() error {
	var err error
	ss.once.Do(func() {
		ss.cancel()
		if ss.s.closed.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, rerr := ss.s.cli.Revoke(ctx, ss.id); rerr != nil {
			err = ss.s.wrap("revoke lease", rerr)
		}
	})
	<-ss.done
	return err
}

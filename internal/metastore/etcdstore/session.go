package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// session is a lease kept alive by the client.
type session struct {
	s      *Store
	id     clientv3.LeaseID
	ttl    time.Duration
	ctx    context.Context // ends with Close
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
	ss := &session{s: s, id: grant.ID, ttl: time.Duration(grant.TTL) * time.Second, ctx: kctx, cancel: cancel, done: make(chan struct{})}
	go ss.run(ka)
	return ss, nil
}

// run drains keep-alive responses until the session ends. The client
// closes the channel when the lease is gone, when the client closes, and
// also when no keep-alive was answered for a TTL: that alone does not mean
// the lease expired. A member whose leader was cut off holds the
// keep-alives it forwards until it gives up on that leader, while the new
// leader renews every lease by a full TTL when it takes over (etcd's
// lessor Promote), as ZooKeeper's new leader does its sessions. So the
// session asks the cluster (confirm) and ends only when the lease is
// reported gone, or when no member answered for half a TTL more (a leader
// elected by then has answered; a broker cut off from every member learns
// no later than that that it must stop acting as registered).
func (ss *session) run(ka <-chan *clientv3.LeaseKeepAliveResponse) {
	defer func() {
		ss.cancel()
		close(ss.done)
		ss.s.lg.Debug("etcdstore: session ended", "lease", int64(ss.id))
	}()
	for {
		for range ka {
		}
		if ss.ctx.Err() != nil || ss.s.closed.Load() || !ss.confirm() {
			return
		}
		var err error
		if ka, err = ss.s.cli.KeepAlive(ss.ctx, ss.id); err != nil {
			return
		}
		ss.s.lg.Info("etcdstore: lease keep-alive resumed after a TTL without an answer", "lease", int64(ss.id))
	}
}

// confirm reports whether the lease still lives: keep-alives, each bounded
// (a new one may reach another member), until one is answered, the lease
// is reported gone, or half a TTL has passed.
func (ss *session) confirm() bool {
	deadline := time.Now().Add(ss.ttl / 2)
	for time.Now().Before(deadline) && ss.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(ss.ctx, max(ss.ttl/6, 500*time.Millisecond))
		resp, err := ss.s.cli.KeepAliveOnce(ctx, ss.id)
		cancel()
		switch {
		case err == nil:
			return resp.TTL > 0
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			return false
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ss.ctx.Done():
		}
	}
	return false
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

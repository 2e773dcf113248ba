package controller

// The controller's store waits out an unavailable store, as Kafka's
// controller waits on ZooKeeper while its session lives (ZooKeeperClient
// holds requests until the connection is back): a read or write that finds
// no answer (metastore.ErrUnavailable: no quorum, no connection, a
// timeout) is tried again, backing off, until it gets one, the
// controller's session ends or ctx does. An event therefore does not stop
// half way through its writes because of a store outage, with the
// controller's memory ahead of the store; it stops only when the session
// ends (a controller without a session resigns next), or after
// patientMaxWait with the session alive.
//
// A write that timed out may have been applied: its retry then finds its
// own versions changed and fails its compares, which the callers already
// handle as a conflict (they read again and redo the change), except the
// campaign for /controller, which TryBecomeController settles by the
// session the key is bound to.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

const (
	patientFirstBackoff = 50 * time.Millisecond
	patientMaxBackoff   = time.Second
	// patientMaxWait bounds the wait while the session lives: a store that
	// keeps the session alive but answers no request for this long fails
	// the event (the controller then reads its state again, or gives the
	// controllership up), rather than hold every other event back.
	patientMaxWait = 30 * time.Second
	// patientLogEvery is how often a long wait is logged again.
	patientLogEvery = 5 * time.Second
)

// patientStore is the store as the controller uses it.
type patientStore struct {
	metastore.Store
	c *Controller
}

func (s patientStore) Get(ctx context.Context, key string) (kv metastore.KV, found bool, err error) {
	err = s.wait(ctx, "get "+key, func(ctx context.Context) error {
		kv, found, err = s.Store.Get(ctx, key)
		return err
	})
	return kv, found, err
}

func (s patientStore) List(ctx context.Context, prefix string) (kvs []metastore.KV, rev int64, err error) {
	err = s.wait(ctx, "list "+prefix, func(ctx context.Context) error {
		kvs, rev, err = s.Store.List(ctx, prefix)
		return err
	})
	return kvs, rev, err
}

func (s patientStore) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (res metastore.TxnResult, err error) {
	err = s.wait(ctx, "transaction", func(ctx context.Context) error {
		res, err = s.Store.Txn(ctx, cmps, ops)
		return err
	})
	return res, err
}

// wait runs op until it does not fail with ErrUnavailable, the session
// ends or ctx does; without a session it runs op once. A try that gets
// no answer within patientMaxWait (an etcd client waits for a connection
// before it sends) counts as unavailable.
func (s patientStore) wait(ctx context.Context, what string, op func(context.Context) error) error {
	try := func() error {
		octx, cancel := context.WithTimeout(ctx, patientMaxWait)
		defer cancel()
		err := op(octx)
		if err != nil && ctx.Err() == nil && errors.Is(octx.Err(), context.DeadlineExceeded) && !errors.Is(err, metastore.ErrUnavailable) {
			err = fmt.Errorf("%w: no answer within %v: %w", metastore.ErrUnavailable, patientMaxWait, err)
		}
		return err
	}
	start := time.Now()
	err := try()
	if !errors.Is(err, metastore.ErrUnavailable) || s.c.session == nil {
		return err
	}
	done := s.c.session.Done()
	logged := start
	s.c.cfg.Logger.Warn("the store is unavailable; the controller waits for it", "op", what, "err", err)
	backoff := patientFirstBackoff
	for tries := 1; errors.Is(err, metastore.ErrUnavailable); tries++ {
		if waited := time.Since(start); waited >= patientMaxWait {
			return fmt.Errorf("%w (no answer for %v, %d tries)", err, waited.Round(time.Second), tries)
		} else if time.Since(logged) >= patientLogEvery {
			logged = time.Now()
			s.c.cfg.Logger.Warn("the store is still unavailable; the controller waits for it", "op", what, "waited", waited.Round(time.Millisecond), "tries", tries, "err", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-done:
			t.Stop()
			return fmt.Errorf("%w (the session ended after %d tries)", err, tries)
		case <-t.C:
		}
		backoff = min(2*backoff, patientMaxBackoff)
		err = try()
	}
	s.c.cfg.Logger.Info("the store answers again", "op", what, "waited", time.Since(start).Round(time.Millisecond), "err", err)
	return err
}

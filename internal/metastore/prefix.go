package metastore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// WithPrefix returns a Store that prepends prefix to every key it is given
// and strips it from every key it returns, so several clusters can share
// one store (Kafka's zookeeper.connect chroot). Callers never see prefix.
// Sessions, revisions and MaxTxnOps are the underlying store's; Close
// closes the underlying store. An empty prefix returns s itself.
//
// Each watch of the returned store runs one goroutine that translates
// keys; it ends when the underlying watch channel closes or ctx ends.
func WithPrefix(s Store, prefix string) Store {
	if prefix == "" {
		return s
	}
	return &prefixed{s: s, prefix: prefix}
}

type prefixed struct {
	s      Store
	prefix string
}

// Unwrap returns the underlying store (for backend-specific test hooks).
func (p *prefixed) Unwrap() Store { return p.s }

// Compact forwards to the underlying store if it can compact (revisions
// are global, not prefixed).
func (p *prefixed) Compact(rev int64) error {
	c, ok := p.s.(interface{ Compact(int64) error })
	if !ok {
		return fmt.Errorf("metastore: compact: %w", errors.ErrUnsupported)
	}
	return c.Compact(rev)
}

func (p *prefixed) strip(kv KV) KV {
	kv.Key = strings.TrimPrefix(kv.Key, p.prefix)
	return kv
}

func (p *prefixed) Get(ctx context.Context, key string) (KV, bool, error) {
	kv, ok, err := p.s.Get(ctx, p.prefix+key)
	return p.strip(kv), ok, err
}

func (p *prefixed) List(ctx context.Context, prefix string) ([]KV, int64, error) {
	kvs, rev, err := p.s.List(ctx, p.prefix+prefix)
	for i := range kvs {
		kvs[i] = p.strip(kvs[i])
	}
	return kvs, rev, err
}

func (p *prefixed) Txn(ctx context.Context, cmps []Cmp, ops []Op) (TxnResult, error) {
	pc := make([]Cmp, len(cmps))
	for i, c := range cmps {
		c.Key = p.prefix + c.Key
		pc[i] = c
	}
	po := make([]Op, len(ops))
	for i, o := range ops {
		o.Key = p.prefix + o.Key
		po[i] = o
	}
	return p.s.Txn(ctx, pc, po)
}

func (p *prefixed) MaxTxnOps() int { return p.s.MaxTxnOps() }

func (p *prefixed) WatchKey(ctx context.Context, key string, fromRevision int64) <-chan WatchResponse {
	return p.translate(ctx, p.s.WatchKey(ctx, p.prefix+key, fromRevision))
}

func (p *prefixed) WatchPrefix(ctx context.Context, prefix string, fromRevision int64) <-chan WatchResponse {
	return p.translate(ctx, p.s.WatchPrefix(ctx, p.prefix+prefix, fromRevision))
}

func (p *prefixed) translate(ctx context.Context, in <-chan WatchResponse) <-chan WatchResponse {
	out := make(chan WatchResponse)
	go func() {
		defer close(out)
		for r := range in {
			for i := range r.Events {
				r.Events[i].KV = p.strip(r.Events[i].KV)
			}
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func (p *prefixed) NewSession(ctx context.Context, ttl time.Duration) (Session, error) {
	return p.s.NewSession(ctx, ttl)
}

func (p *prefixed) Close() error { return p.s.Close() }

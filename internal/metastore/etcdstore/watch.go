package etcdstore

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// errWatchEnded is sent when etcd closes a watch the caller did not cancel.
var errWatchEnded = errors.New("etcdstore: watch ended by the client")

// WatchKey implements metastore.Store.
func (s *Store) WatchKey(ctx context.Context, key string, fromRevision int64) <-chan metastore.WatchResponse {
	return s.watch(ctx, key, false, fromRevision)
}

// WatchPrefix implements metastore.Store.
func (s *Store) WatchPrefix(ctx context.Context, prefix string, fromRevision int64) <-chan metastore.WatchResponse {
	return s.watch(ctx, prefix, true, fromRevision)
}

func (s *Store) watch(ctx context.Context, key string, prefix bool, fromRev int64) <-chan metastore.WatchResponse {
	out := make(chan metastore.WatchResponse)
	if s.closed.Load() {
		go send(ctx, out, metastore.WatchResponse{Err: metastore.ErrClosed}, true)
		return out
	}
	var opts []clientv3.OpOption
	if prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev))
	}
	wctx, cancel := context.WithCancel(ctx)
	in := s.cli.Watch(clientv3.WithRequireLeader(wctx), key, opts...)
	go func() {
		defer cancel()
		s.translate(ctx, key, in, out)
	}()
	return out
}

// translate forwards etcd watch responses as metastore responses and
// closes out when done.
func (s *Store) translate(ctx context.Context, key string, in clientv3.WatchChan, out chan<- metastore.WatchResponse) {
	defer close(out)
	for wr := range in {
		var r metastore.WatchResponse
		switch {
		case wr.CompactRevision != 0:
			r.Revision = wr.CompactRevision
			r.Err = fmt.Errorf("etcdstore: watch %q: %w (compacted at %d)", key, metastore.ErrCompacted, wr.CompactRevision)
		case wr.Err() != nil:
			r.Revision = wr.Header.Revision
			r.Err = s.wrap("watch "+key, wr.Err())
		default:
			r.Revision = wr.Header.Revision
			r.Events = make([]metastore.Event, 0, len(wr.Events))
			for _, ev := range wr.Events {
				r.Events = append(r.Events, toEvent(ev))
			}
			if len(r.Events) == 0 {
				continue
			}
		}
		if !send(ctx, out, r, false) || r.Err != nil {
			return
		}
	}
	if ctx.Err() == nil {
		err := errWatchEnded
		if s.closed.Load() {
			err = metastore.ErrClosed
		}
		send(ctx, out, metastore.WatchResponse{Err: err}, false)
	}
}

// send delivers r unless ctx ends first; closeAfter closes out afterwards.
func send(ctx context.Context, out chan<- metastore.WatchResponse, r metastore.WatchResponse, closeAfter bool) bool {
	if closeAfter {
		defer close(out)
	}
	select {
	case out <- r:
		return true
	case <-ctx.Done():
		return false
	}
}

func toEvent(ev *clientv3.Event) metastore.Event {
	if ev.Type == mvccpb.DELETE {
		return metastore.Event{Type: metastore.EventDelete, KV: metastore.KV{Key: string(ev.Kv.Key), Version: ev.Kv.ModRevision}}
	}
	return metastore.Event{Type: metastore.EventPut, KV: toKV(ev.Kv)}
}

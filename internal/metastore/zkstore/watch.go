package zkstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// maxRounds bounds how often a batch reads again the znodes notified
// during its reads before it is sent anyway (under a ceaseless stream of
// writes; see the package doc on order).
const maxRounds = 64

// notice is one notification for a watcher.
type notice struct {
	typ    zk.EventType
	path   string
	resync bool // the store's session expired: ZooKeeper dropped its watches
	closed bool // the store closed
}

// node is a znode a prefix watch tracks.
type node struct {
	key   bool // holds a key
	mzxid int64
	// kids are the children seen; nil on ephemeral znodes (no child
	// watch: they cannot have children).
	kids map[string]struct{}
}

// watcher is one WatchKey or WatchPrefix: its goroutine owns every field
// but the queue.
type watcher struct {
	s      *Store
	exact  bool
	target string // exact: the key's znode; prefix: the path prefix
	dir    string // prefix: the directory whose matching children are watched
	out    chan metastore.WatchResponse

	mu    sync.Mutex
	queue []notice
	wake  chan struct{}

	nodes   map[string]*node
	dirKids map[string]struct{} // the watched children of dir
	events  []metastore.Event   // of the batch being built
	last    int64               // highest revision sent
}

// WatchKey implements metastore.Store.
func (s *Store) WatchKey(ctx context.Context, key string, fromRevision int64) <-chan metastore.WatchResponse {
	p, err := s.path(key)
	return s.watch(ctx, &watcher{exact: true, target: p}, fromRevision, err)
}

// WatchPrefix implements metastore.Store.
func (s *Store) WatchPrefix(ctx context.Context, prefix string, fromRevision int64) <-chan metastore.WatchResponse {
	var err error
	if !strings.HasPrefix(prefix, "/") {
		err = errors.New("zkstore: watch: prefix must start with /")
	}
	full := s.root + prefix
	return s.watch(ctx, &watcher{target: full, dir: walkStart(full)}, fromRevision, err)
}

// watch arms the watcher's ZooKeeper watches before it returns (a watch
// from 0 misses nothing written after), then runs it.
func (s *Store) watch(ctx context.Context, w *watcher, from int64, err error) <-chan metastore.WatchResponse {
	w.s, w.out, w.wake = s, make(chan metastore.WatchResponse), make(chan struct{}, 1)
	w.nodes, w.dirKids = map[string]*node{}, map[string]struct{}{}
	if err == nil {
		err = s.check(ctx)
	}
	if err == nil {
		s.mu.Lock()
		s.watchers[w] = struct{}{}
		s.mu.Unlock()
		var old map[string]int64
		if from > 0 && !w.exact {
			old = s.baselineFor(w.target, from-1)
		}
		err = w.sync(ctx, old, from, true)
	}
	if err != nil {
		s.forgetWatcher(w)
		go func() {
			defer close(w.out)
			w.send(ctx, metastore.WatchResponse{Err: w.fail(err)})
		}()
		return w.out
	}
	go w.run(ctx)
	return w.out
}

func (s *Store) forgetWatcher(w *watcher) {
	s.mu.Lock()
	delete(s.watchers, w)
	s.mu.Unlock()
}

// route runs on the store connection's receive goroutine for every event,
// in order, before the replies that follow it: it only queues.
func (s *Store) route(ev zk.Event) {
	var n notice
	switch {
	case ev.Type == zk.EventSession && ev.State == zk.StateExpired:
		n.resync = true
	case ev.Type == zk.EventNodeCreated, ev.Type == zk.EventNodeDeleted,
		ev.Type == zk.EventNodeDataChanged, ev.Type == zk.EventNodeChildrenChanged:
		n.typ, n.path = ev.Type, ev.Path
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		if n.resync || w.interested(n.path) {
			w.notify(n)
		}
	}
}

func (w *watcher) interested(path string) bool {
	if w.exact {
		return path == w.target
	}
	return path == w.dir || strings.HasPrefix(path, w.target)
}

func (w *watcher) notify(n notice) {
	w.mu.Lock()
	w.queue = append(w.queue, n)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) take() []notice {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// run answers notifications in batches until ctx ends or the store closes.
func (w *watcher) run(ctx context.Context) {
	defer close(w.out)
	defer w.s.forgetWatcher(w)
	if !w.flush(ctx) {
		return
	}
	backoff := 50 * time.Millisecond
	for {
		var ns []notice
		for ns == nil {
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
				ns = w.take()
			}
		}
		err := w.handleAll(ctx, ns)
		for err != nil {
			if w.s.closed.Load() || errors.Is(err, zk.ErrClosing) {
				w.send(ctx, metastore.WatchResponse{Err: w.fail(err)})
				return
			}
			// The connection failed a read: watches may be unarmed.
			// Read everything again once it is back.
			w.s.lg.Debug("zkstore: watch resyncs", "target", w.target, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			w.take()
			err = w.resync(ctx)
		}
		backoff = 50 * time.Millisecond
		if !w.flush(ctx) {
			return
		}
	}
}

// handleAll handles ns and every notification arriving meanwhile, so that
// the batch holds every change up to the newest revision it read.
func (w *watcher) handleAll(ctx context.Context, ns []notice) error {
	for round := 0; len(ns) > 0; round++ {
		for _, n := range ns {
			var err error
			switch {
			case n.closed:
				return fmt.Errorf("zkstore: watch: %w", metastore.ErrClosed)
			case n.resync:
				err = w.resync(ctx)
			default:
				err = w.handle(ctx, n)
			}
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
		}
		if round == maxRounds {
			return nil
		}
		ns = w.take()
	}
	return nil
}

// flush sends the batch's events in revision order.
func (w *watcher) flush(ctx context.Context) bool {
	if len(w.events) == 0 {
		return ctx.Err() == nil
	}
	evs := w.events
	w.events = nil
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].KV.Version < evs[j].KV.Version })
	w.last = max(w.last, evs[len(evs)-1].KV.Version)
	return w.send(ctx, metastore.WatchResponse{Events: evs, Revision: w.last})
}

func (w *watcher) send(ctx context.Context, r metastore.WatchResponse) bool {
	select {
	case w.out <- r:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *watcher) fail(err error) error {
	if w.s.closed.Load() && !errors.Is(err, metastore.ErrClosed) {
		return fmt.Errorf("zkstore: watch %q: %w", w.s.key(w.target), metastore.ErrClosed)
	}
	return w.s.wrap("watch "+w.s.key(w.target), err)
}

func (w *watcher) put(path string, data []byte, st *zk.Stat) {
	w.events = append(w.events, metastore.Event{Type: metastore.EventPut, KV: w.s.toKV(path, data, st)})
}

func (w *watcher) del(path string, rev int64) {
	w.events = append(w.events, metastore.Event{Type: metastore.EventDelete, KV: metastore.KV{Key: w.s.key(path), Version: rev}})
}

// handle answers one notification by reading the znode again (which arms
// its next watch).
func (w *watcher) handle(ctx context.Context, n notice) error {
	if w.exact {
		return w.readKey(n.typ == zk.EventNodeDeleted)
	}
	switch {
	case n.path == w.dir:
		if n.typ == zk.EventNodeDataChanged {
			return nil
		}
		return w.readDir(ctx)
	case w.nodes[n.path] == nil:
		return nil
	case n.typ == zk.EventNodeDeleted:
		rev, err := w.deleteRev(n.path)
		if err != nil {
			return err
		}
		w.remove(n.path, rev)
		return nil
	case n.typ == zk.EventNodeChildrenChanged:
		return w.readKids(ctx, n.path)
	default:
		return w.readData(n.path)
	}
}

// readKey reads an exact watch's key; deleted says a delete was notified
// (the key may exist again already).
func (w *watcher) readKey(deleted bool) error {
	p := w.target
	for {
		data, st, _, err := w.s.conn.GetW(p)
		old := w.nodes[p]
		if errors.Is(err, zk.ErrNoNode) {
			if old != nil {
				rev, err := w.deleteRev(p)
				if err != nil {
					return err
				}
				delete(w.nodes, p)
				if old.key {
					w.del(p, rev)
				}
			}
			ok, _, _, err := w.s.conn.ExistsW(p)
			if err != nil || !ok {
				return err
			}
			continue // created meanwhile; GetW arms the data watch
		}
		if err != nil {
			return err
		}
		if deleted && old != nil && old.key {
			rev, err := w.deleteRev(p)
			if err != nil {
				return err
			}
			w.del(p, rev)
			old = nil
		}
		w.setData(p, data, st, old, 0)
		return nil
	}
}

// setData records a znode read and queues the event it implies; minRev
// filters Puts (a watch's start).
func (w *watcher) setData(p string, data []byte, st *zk.Stat, old *node, minRev int64) *node {
	n := old
	if n == nil {
		n = &node{}
		w.nodes[p] = n
	}
	switch {
	case data != nil && (!n.key || n.mzxid != st.Mzxid) && st.Mzxid >= minRev:
		w.put(p, data, st)
	case data == nil && n.key:
		w.del(p, st.Mzxid)
	}
	n.key, n.mzxid = data != nil, st.Mzxid
	return n
}

// readData answers a data change of a tracked znode.
func (w *watcher) readData(p string) error {
	data, st, _, err := w.s.conn.GetW(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // its parent's child watch reports the delete
	}
	if err != nil {
		return err
	}
	w.setData(p, data, st, w.nodes[p], 0)
	return nil
}

// readDir answers a change of the watched directory's children, its
// creation or its deletion.
func (w *watcher) readDir(ctx context.Context) error {
	for {
		names, st, _, err := w.s.conn.ChildrenW(w.dir)
		if errors.Is(err, zk.ErrNoNode) {
			rev, err := w.deleteRev(w.dir)
			if err != nil {
				return err
			}
			for k := range w.dirKids {
				w.remove(child(w.dir, k), rev)
			}
			ok, _, _, err := w.s.conn.ExistsW(w.dir)
			if err != nil || !ok {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		var fresh []string
		seen := make(map[string]struct{}, len(names))
		for _, k := range names {
			p := child(w.dir, k)
			if !matches(p, w.target) || w.s.internal(p) {
				continue
			}
			seen[k] = struct{}{}
			if _, ok := w.dirKids[k]; !ok {
				w.dirKids[k] = struct{}{}
				fresh = append(fresh, p)
			}
		}
		for k := range w.dirKids {
			if _, ok := seen[k]; !ok {
				w.remove(child(w.dir, k), st.Pzxid)
			}
		}
		return w.walkNew(ctx, fresh, 0)
	}
}

// readKids answers a change of a tracked znode's children.
func (w *watcher) readKids(ctx context.Context, p string) error {
	n := w.nodes[p]
	if n.kids == nil {
		return nil
	}
	names, st, _, err := w.s.conn.ChildrenW(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // its parent's child watch reports the delete
	}
	if err != nil {
		return err
	}
	var fresh []string
	seen := make(map[string]struct{}, len(names))
	for _, k := range names {
		seen[k] = struct{}{}
		if _, ok := n.kids[k]; !ok {
			n.kids[k] = struct{}{}
			fresh = append(fresh, child(p, k))
		}
	}
	for k := range n.kids {
		if _, ok := seen[k]; !ok {
			w.remove(child(p, k), st.Pzxid)
		}
	}
	return w.walkNew(ctx, fresh, 0)
}

// walkNew reads and watches new znodes and everything under them,
// queueing Puts for their keys at revision minRev or later.
func (w *watcher) walkNew(ctx context.Context, paths []string, minRev int64) error {
	if len(paths) == 0 {
		return nil
	}
	var mu sync.Mutex
	return walk(ctx, w.s.cfg.MaxInFlight, paths, func(p string) ([]string, error) {
		data, st, _, err := w.s.conn.GetW(p)
		if errors.Is(err, zk.ErrNoNode) {
			mu.Lock()
			w.unlink(p)
			mu.Unlock()
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var names []string
		if st.EphemeralOwner == 0 {
			names, _, _, err = w.s.conn.ChildrenW(p)
			if errors.Is(err, zk.ErrNoNode) {
				err = nil
			}
			if err != nil {
				return nil, err
			}
		}
		mu.Lock()
		defer mu.Unlock()
		n := w.setData(p, data, st, nil, minRev)
		if st.EphemeralOwner != 0 {
			return nil, nil
		}
		n.kids = make(map[string]struct{}, len(names))
		next := make([]string, len(names))
		for i, k := range names {
			n.kids[k] = struct{}{}
			next[i] = child(p, k)
		}
		return next, nil
	})
}

// remove forgets p and everything under it, queueing Deletes at rev for
// their keys.
func (w *watcher) remove(p string, rev int64) {
	n := w.nodes[p]
	w.unlink(p)
	if n == nil {
		return
	}
	delete(w.nodes, p)
	if n.key {
		w.del(p, rev)
	}
	for k := range n.kids {
		w.remove(child(p, k), rev)
	}
}

// unlink removes p from its parent's children.
func (w *watcher) unlink(p string) {
	dir := parent(p)
	name := p[strings.LastIndexByte(p, '/')+1:]
	if dir == w.dir {
		delete(w.dirKids, name)
	} else if pn := w.nodes[dir]; pn != nil && pn.kids != nil {
		delete(pn.kids, name)
	}
}

// deleteRev is the revision to report p's delete at: the Pzxid of its
// nearest existing ancestor, the delete's zxid unless that ancestor's
// children changed again since.
func (w *watcher) deleteRev(p string) (int64, error) {
	for a := parent(p); ; a = parent(a) {
		ok, st, err := w.s.conn.Exists(a)
		if err != nil {
			return 0, err
		}
		if ok {
			return max(st.Pzxid, w.last), nil
		}
		if a == "/" {
			return w.last, nil
		}
	}
}

// resync reads and watches everything again after watches were lost,
// reporting what changed meanwhile.
func (w *watcher) resync(ctx context.Context) error {
	old := make(map[string]int64, len(w.nodes))
	for p, n := range w.nodes {
		if n.key {
			old[p] = n.mzxid
		}
	}
	return w.sync(ctx, old, 0, false)
}

// sync reads the watched znodes from scratch, arming their watches, and
// queues a Put for every key at minRev or later whose Mzxid differs from
// old's, and a Delete for every key of old that is gone. start: the
// watch's first sync, whose events are sent first.
func (w *watcher) sync(ctx context.Context, old map[string]int64, minRev int64, start bool) error {
	w.nodes, w.dirKids = map[string]*node{}, map[string]struct{}{}
	if w.exact {
		saved := w.events
		w.events = nil
		err := w.readKey(false)
		if n := w.nodes[w.target]; start && (minRev == 0 || n == nil || n.mzxid < minRev) {
			w.events = nil
		}
		w.events = append(saved, w.events...)
		return err
	}
	var err error
	if minRev == 0 && start {
		// From now: record the current state silently.
		err = w.readDir(ctx)
		w.events = nil
		return err
	}
	saved := w.events
	w.events = nil
	if err = w.readDir(ctx); err != nil {
		return err
	}
	var evs []metastore.Event
	var rev int64
	for _, ev := range w.events {
		rev = max(rev, ev.KV.Version)
		p := w.s.root + ev.KV.Key
		if v, ok := old[p]; ok && v == ev.KV.Version {
			continue
		}
		if ev.KV.Version >= minRev {
			evs = append(evs, ev)
		}
	}
	if rev, err = w.deleteRev(w.dir + "/x"); err != nil {
		return err
	}
	for p := range old {
		if n := w.nodes[p]; n == nil || !n.key {
			evs = append(evs, metastore.Event{Type: metastore.EventDelete, KV: metastore.KV{Key: w.s.key(p), Version: rev}})
		}
	}
	w.events = append(saved, evs...)
	return nil
}

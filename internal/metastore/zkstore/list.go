package zkstore

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// baselines is how many Lists the store remembers for watches that start
// from their revisions.
const baselines = 4

// baseline is what one List returned: the revision and each key's Mzxid.
type baseline struct {
	prefix string // znode path prefix
	rev    int64
	keys   map[string]int64
}

// walkStart is the directory whose children a prefix's walk starts from:
// the prefix up to its last "/".
func walkStart(prefix string) string {
	return parent(prefix + "x")
}

// matches says whether a child of the walk's directory is under prefix.
func matches(path, prefix string) bool { return strings.HasPrefix(path, prefix) }

// List implements metastore.Store. The revision is the chroot's Mzxid after
// a sync, the zxid of the last Txn before the listing; the listing reads
// znode after znode, so keys written meanwhile show their newer versions
// (and come again in a watch from revision+1).
func (s *Store) List(ctx context.Context, prefix string) ([]metastore.KV, int64, error) {
	if err := s.check(ctx); err != nil {
		return nil, 0, err
	}
	if !strings.HasPrefix(prefix, "/") {
		return nil, 0, errors.New("zkstore: list: prefix must start with /")
	}
	rev, err := s.revision()
	if err != nil {
		return nil, 0, s.wrap("list "+prefix, err)
	}
	full := s.root + prefix
	dir := walkStart(full)
	kids, _, err := s.conn.Children(dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, rev, nil
	}
	if err != nil {
		return nil, 0, s.wrap("list "+prefix, err)
	}
	var roots []string
	for _, k := range kids {
		if p := child(dir, k); matches(p, full) && !s.internal(p) {
			roots = append(roots, p)
		}
	}
	var mu sync.Mutex
	var kvs []metastore.KV
	err = walk(ctx, s.cfg.MaxInFlight, roots, func(p string) ([]string, error) {
		data, st, err := s.conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if data != nil {
			mu.Lock()
			kvs = append(kvs, s.toKV(p, data, st))
			mu.Unlock()
		}
		if st.NumChildren == 0 {
			return nil, nil
		}
		names, _, err := s.conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil
		}
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = child(p, n)
		}
		return out, err
	})
	if err != nil {
		return nil, 0, s.wrap("list "+prefix, err)
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
	b := baseline{prefix: full, rev: rev, keys: make(map[string]int64, len(kvs))}
	for _, kv := range kvs {
		b.keys[s.root+kv.Key] = kv.Version
	}
	s.mu.Lock()
	s.baselines = append(s.baselines, b)
	if len(s.baselines) > baselines {
		s.baselines = s.baselines[1:]
	}
	s.mu.Unlock()
	return kvs, rev, nil
}

// revision is the zxid of the last Txn through any client of this chroot,
// read after a sync with the leader.
func (s *Store) revision() (int64, error) {
	if _, err := s.conn.Sync(s.rootPath()); err != nil {
		return 0, err
	}
	_, st, err := s.conn.Exists(s.rootPath())
	if err != nil {
		return 0, err
	}
	return st.Mzxid, nil
}

// baselineFor takes the remembered List of prefix at rev (nil if none).
func (s *Store) baselineFor(prefix string, rev int64) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.baselines) - 1; i >= 0; i-- {
		if b := s.baselines[i]; b.prefix == prefix && b.rev == rev {
			s.baselines = append(s.baselines[:i], s.baselines[i+1:]...)
			return b.keys
		}
	}
	return nil
}

// walk visits the znodes under roots (roots included) with up to n visits
// at once; visit returns the znodes to visit next. Its goroutines end
// before it returns.
func walk(ctx context.Context, n int, roots []string, visit func(path string) ([]string, error)) error {
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = append([]string(nil), roots...)
		pending = len(roots) // queued or being visited
		first   error
		wg      sync.WaitGroup
	)
	worker := func() {
		defer wg.Done()
		mu.Lock()
		defer mu.Unlock()
		for {
			for len(queue) == 0 && pending > 0 && first == nil {
				cond.Wait()
			}
			if pending == 0 || first != nil {
				cond.Broadcast()
				return
			}
			p := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			mu.Unlock()
			next, err := visit(p)
			if err == nil {
				err = ctx.Err()
			}
			mu.Lock()
			if err != nil && first == nil {
				first = err
			}
			queue = append(queue, next...)
			pending += len(next) - 1
			cond.Broadcast()
		}
	}
	wg.Add(n)
	for range n {
		go worker()
	}
	wg.Wait()
	return first
}

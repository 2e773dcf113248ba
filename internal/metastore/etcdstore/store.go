package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// DefaultMaxTxnOps is etcd's default --max-txn-ops.
const DefaultMaxTxnOps = 128

// listPage is how many keys one List round trip reads.
const listPage = 10000

// Store is a metastore.Store over one etcd client.
type Store struct {
	cli    *clientv3.Client
	lg     *slog.Logger
	maxOps int
	closed atomic.Bool
}

var _ metastore.Store = (*Store)(nil)

// ParseConnect splits Kafka's connect string "host:port[,host:port...][/chroot]"
// into etcd endpoints and a chroot ("" if none; never ending in "/").
// Endpoints may carry a scheme (http://host:port).
func ParseConnect(s string) (endpoints []string, chroot string, err error) {
	s = strings.TrimSpace(s)
	hosts := s
	base := 0
	if i := strings.LastIndex(s, "://"); i >= 0 {
		base = i + 3
	}
	if i := strings.IndexByte(s[base:], '/'); i >= 0 {
		hosts, chroot = s[:base+i], strings.TrimRight(s[base+i:], "/")
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		hp := h
		if i := strings.Index(h, "://"); i >= 0 {
			hp = h[i+3:]
		}
		if _, port, err := net.SplitHostPort(hp); err != nil || port == "" {
			return nil, "", fmt.Errorf("etcdstore: connect string %q: endpoint %q is not host:port", s, h)
		}
		endpoints = append(endpoints, h)
	}
	return endpoints, chroot, nil
}

// keepAliveTimeout bounds how long a member may leave the client's data
// or pings unanswered before its connection is given up: well within the
// shortest session a broker uses (a keep-alive goes out every third of it).
const keepAliveTimeout = time.Second

// Connect dials an etcd cluster and returns a Store rooted at chroot ("":
// the whole keyspace).
func Connect(endpoints []string, chroot string, dialTimeout time.Duration) (metastore.Store, error) {
	return ConnectLogger(endpoints, chroot, dialTimeout, nil)
}

// ConnectLogger is Connect with a logger (nil: discard).
func ConnectLogger(endpoints []string, chroot string, dialTimeout time.Duration, lg *slog.Logger) (metastore.Store, error) {
	return ConnectMaxOps(endpoints, chroot, dialTimeout, lg, DefaultMaxTxnOps)
}

// ConnectMaxOps is ConnectLogger to servers started with --max-txn-ops
// maxTxnOps (larger transactions: fewer commits for big batches).
func ConnectMaxOps(endpoints []string, chroot string, dialTimeout time.Duration, lg *slog.Logger, maxTxnOps int) (metastore.Store, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("etcdstore: no endpoints")
	}
	if chroot != "" && !strings.HasPrefix(chroot, "/") {
		return nil, fmt.Errorf("etcdstore: chroot %q must start with /", chroot)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: dialTimeout,
		// The client holds a connection to every member and spreads its
		// streams over them. A member cut off by dropped packets leaves
		// its connection open and silent: without these, a session whose
		// keep-alive stream runs over it expires although a majority is
		// reachable (the fault campaign's store-minority fault cost
		// brokers their registrations and the controller its epoch).
		// A keep-alive timeout also sets TCP_USER_TIMEOUT: data unacked
		// for that long, such as the next lease keep-alive (every third
		// of the session), closes the connection and the streams move to
		// another member within the session. gRPC pings an idle
		// connection at most every 10 s; the members accept that (etcd's
		// --grpc-keepalive-min-time is 5 s).
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: keepAliveTimeout,
		// A connection given up is dialled again within a second of the
		// member coming back (gRPC's default backoff reaches 2 minutes;
		// a broker cut off from every member would wait that long to
		// reach the store again after the heal), and a dial into a silent
		// network gives up after a few seconds instead of 20.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 3 * time.Second,
		})},
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcdstore: connect %v: %w", endpoints, err)
	}
	st := New(cli, lg)
	st.SetMaxTxnOps(maxTxnOps)
	return metastore.WithPrefix(st, strings.TrimRight(chroot, "/")), nil
}

// New returns a Store over an existing client; Close closes the client.
func New(cli *clientv3.Client, lg *slog.Logger) *Store {
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Store{cli: cli, lg: lg, maxOps: DefaultMaxTxnOps}
}

// Client is the underlying etcd client (for tests and tools).
func (s *Store) Client() *clientv3.Client { return s.cli }

// SetMaxTxnOps matches a server started with a non-default --max-txn-ops.
func (s *Store) SetMaxTxnOps(n int) {
	if n > 0 {
		s.maxOps = n
	}
}

// MaxTxnOps implements metastore.Store.
func (s *Store) MaxTxnOps() int { return s.maxOps }

// Close closes the client; sessions' Done close, their leases expire on
// the server by TTL.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.cli.Close()
}

// Get implements metastore.Store.
func (s *Store) Get(ctx context.Context, key string) (metastore.KV, bool, error) {
	resp, err := s.cli.Get(ctx, key)
	if err != nil {
		return metastore.KV{}, false, s.wrap("get "+key, err)
	}
	if len(resp.Kvs) == 0 {
		return metastore.KV{}, false, nil
	}
	return toKV(resp.Kvs[0]), true, nil
}

// List implements metastore.Store: pages of listPage keys, all read at the
// revision of the first page. If that revision is compacted between pages,
// the listing starts over at a newer one.
func (s *Store) List(ctx context.Context, prefix string) ([]metastore.KV, int64, error) {
	for attempt := 1; ; attempt++ {
		kvs, rev, err := s.list(ctx, prefix)
		if attempt < 3 && errors.Is(err, metastore.ErrCompacted) {
			continue
		}
		return kvs, rev, err
	}
}

func (s *Store) list(ctx context.Context, prefix string) ([]metastore.KV, int64, error) {
	start, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	if prefix == "" {
		start, end = "\x00", "\x00"
	}
	var out []metastore.KV
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(listPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.cli.Get(ctx, start, opts...)
		if err != nil {
			return nil, 0, s.wrap("list "+prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			out = append(out, toKV(kv))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, rev, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Compact discards history up to rev (etcd Compact); watches from earlier
// revisions then fail with ErrCompacted.
func (s *Store) Compact(rev int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.cli.Compact(ctx, rev)
	return s.wrap(fmt.Sprintf("compact %d", rev), err)
}

func toKV(kv *mvccpb.KeyValue) metastore.KV {
	return metastore.KV{
		Key:     string(kv.Key),
		Value:   kv.Value,
		Version: kv.ModRevision,
		Created: kv.CreateRevision,
		Session: metastore.SessionID(kv.Lease),
	}
}

// wrap maps etcd errors to metastore sentinels and adds the package prefix.
func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var sentinel error
	switch {
	case s.closed.Load():
		sentinel = metastore.ErrClosed
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		sentinel = metastore.ErrSessionExpired
	case errors.Is(err, rpctypes.ErrTooManyOps):
		sentinel = metastore.ErrTooManyOps
	case errors.Is(err, rpctypes.ErrCompacted):
		sentinel = metastore.ErrCompacted
	case unavailable(err):
		sentinel = metastore.ErrUnavailable
	}
	if sentinel != nil {
		return fmt.Errorf("etcdstore: %s: %w (%w)", what, sentinel, err)
	}
	return fmt.Errorf("etcdstore: %s: %w", what, err)
}

// unavailable tells the errors of a cluster that gave no answer: no
// connection to a member or no quorum behind it (gRPC Unavailable, or a
// deadline the server ran out of), and the server's own timeouts and
// leader changes. A write that failed so may have been applied.
func unavailable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	for _, e := range []error{rpctypes.ErrNoLeader, rpctypes.ErrLeaderChanged, rpctypes.ErrStopped, rpctypes.ErrTimeout,
		rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost, rpctypes.ErrTimeoutWaitAppliedIndex,
		rpctypes.ErrUnhealthy} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

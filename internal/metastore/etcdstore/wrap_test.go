package etcdstore

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// The errors of a cluster that gave no answer are ErrUnavailable (the
// controller waits them out); answers and a caller's cancellation are not.
func TestWrapUnavailable(t *testing.T) {
	s := &Store{}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{status.Error(codes.Unavailable, "error reading from server: connection timed out"), true},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), true},
		{rpctypes.ErrTimeout, true},
		{rpctypes.ErrNoLeader, true},
		{rpctypes.ErrLeaderChanged, true},
		{rpctypes.ErrTimeoutDueToConnectionLost, true},
		{rpctypes.ErrLeaseNotFound, false},
		{rpctypes.ErrTooManyOps, false},
		{status.Error(codes.Canceled, "context canceled"), false},
		{context.Canceled, false},
		{errors.New("something else"), false},
	} {
		if got := errors.Is(s.wrap("txn", c.err), metastore.ErrUnavailable); got != c.want {
			t.Errorf("%v: ErrUnavailable %v, want %v", c.err, got, c.want)
		}
	}
}

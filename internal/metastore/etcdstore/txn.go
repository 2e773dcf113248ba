package etcdstore

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Txn implements metastore.Store.
func (s *Store) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	if n := len(cmps) + len(ops); n > s.maxOps {
		return metastore.TxnResult{}, fmt.Errorf("etcdstore: %d operations, at most %d: %w", n, s.maxOps, metastore.ErrTooManyOps)
	}
	ecmps := make([]clientv3.Cmp, len(cmps))
	for i, c := range cmps {
		if c.Version == 0 {
			ecmps[i] = clientv3.Compare(clientv3.CreateRevision(c.Key), "=", 0)
		} else {
			ecmps[i] = clientv3.Compare(clientv3.ModRevision(c.Key), "=", c.Version)
		}
	}
	eops := make([]clientv3.Op, len(ops))
	for i, op := range ops {
		switch op.Type {
		case metastore.OpPut:
			var opts []clientv3.OpOption
			if op.Session != 0 {
				opts = append(opts, clientv3.WithLease(clientv3.LeaseID(op.Session)))
			}
			eops[i] = clientv3.OpPut(op.Key, string(op.Value), opts...)
		case metastore.OpDelete:
			eops[i] = clientv3.OpDelete(op.Key)
		default:
			return metastore.TxnResult{}, fmt.Errorf("etcdstore: unknown op type %d on key %q", op.Type, op.Key)
		}
	}
	resp, err := s.cli.Txn(ctx).If(ecmps...).Then(eops...).Commit()
	if err != nil {
		return metastore.TxnResult{}, s.wrap("txn", err)
	}
	return metastore.TxnResult{Succeeded: resp.Succeeded, Revision: resp.Header.Revision}, nil
}

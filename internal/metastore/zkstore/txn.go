package zkstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// txnAttempts bounds how often a Txn is rebuilt when a znode changed
// between its reads and its multi in a way no cmp guards (a parent
// removed, a key created): the caller's cmps are checked again each time.
const txnAttempts = 20

// txnMargin is what a multi leaves of jute.maxbuffer for estimate errors.
const txnMargin = 64 << 10

// opOverhead is a generous estimate of one multi op's bytes besides its
// path and value (headers, version, flags, an open ACL).
const opOverhead = 64

// Txn implements metastore.Store: one multi of the cmps (as CheckVersion
// ops), the ops, and a null write to the chroot znode whose Stat carries
// the multi's zxid.
func (s *Store) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	if n := len(cmps) + len(ops); n > s.maxOps {
		return metastore.TxnResult{}, fmt.Errorf("zkstore: %d operations, at most %d: %w", n, s.maxOps, metastore.ErrTooManyOps)
	}
	size := 0
	for _, c := range cmps {
		size += len(s.root) + len(c.Key) + opOverhead
	}
	seen := make(map[string]bool, len(ops))
	var sess *session
	for _, op := range ops {
		size += len(s.root) + len(op.Key) + len(op.Value) + opOverhead
		if seen[op.Key] {
			return metastore.TxnResult{}, fmt.Errorf("zkstore: key %q written twice in one transaction", op.Key)
		}
		seen[op.Key] = true
		if op.Type != metastore.OpPut || op.Session == 0 {
			continue
		}
		ss, err := s.session(op.Session)
		if err != nil {
			return metastore.TxnResult{}, err
		}
		if sess != nil && sess != ss {
			return metastore.TxnResult{}, fmt.Errorf("zkstore: one transaction binds keys to sessions %d and %d", sess.id, ss.id)
		}
		sess = ss
	}
	if size > s.cfg.MaxBuffer-txnMargin {
		return metastore.TxnResult{}, fmt.Errorf("zkstore: transaction of about %d bytes, jute.maxbuffer is %d: %w", size, s.cfg.MaxBuffer, metastore.ErrTooManyOps)
	}
	conn := s.conn
	if sess != nil {
		conn = sess.conn
	}
	for attempt := 1; ; attempt++ {
		if err := s.check(ctx); err != nil {
			return metastore.TxnResult{}, err
		}
		res, retry, err := s.txnOnce(conn, cmps, ops)
		if err != nil && sess != nil && (errors.Is(err, zk.ErrSessionExpired) || sess.ended()) {
			return metastore.TxnResult{}, fmt.Errorf("zkstore: txn: session %d: %w (%w)", sess.id, metastore.ErrSessionExpired, err)
		}
		if err != nil {
			return metastore.TxnResult{}, s.wrap("txn", err)
		}
		if !retry {
			if res.Succeeded && sess != nil && conn.SessionID() != int64(sess.id) {
				// The connection lost the session and got a new one
				// before the multi: the keys are bound to neither.
				return metastore.TxnResult{}, fmt.Errorf("zkstore: txn: session %d: %w", sess.id, metastore.ErrSessionExpired)
			}
			if res.Succeeded {
				s.removeEmptyDirs(ops)
			}
			return res, nil
		}
		if attempt == txnAttempts {
			return metastore.TxnResult{}, fmt.Errorf("zkstore: txn: znodes kept changing under %d attempts", attempt)
		}
		time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
	}
}

// txnOnce reads the znodes of cmps and ops, builds the multi and runs it.
// retry says the multi failed on an op the reads had planned, not on a
// caller's cmp.
func (s *Store) txnOnce(conn *zk.Conn, cmps []metastore.Cmp, ops []metastore.Op) (res metastore.TxnResult, retry bool, err error) {
	// Read the ops' znodes first and create the parents of new keys, so
	// that the cmps' absence checks see those parents.
	opPaths := make([]string, len(ops))
	for i, op := range ops {
		if opPaths[i], err = s.path(op.Key); err != nil {
			return res, false, err
		}
	}
	targets, err := s.readAll(opPaths)
	if err != nil {
		return res, false, err
	}
	dirs := map[string]bool{}
	for i, op := range ops {
		if p := opPaths[i]; targets[i].st == nil && op.Type == metastore.OpPut && !dirs[parent(p)] {
			if err := s.ensureDirs(p); err != nil {
				return res, false, err
			}
			dirs[parent(p)] = true
		}
	}
	cmpPaths := make([]string, len(cmps))
	for i, c := range cmps {
		if cmpPaths[i], err = s.path(c.Key); err != nil {
			return res, false, err
		}
	}
	cmpReads, err := s.readAll(cmpPaths)
	if err != nil {
		return res, false, err
	}
	var multi []any
	for i, c := range cmps {
		p, data, st := cmpPaths[i], cmpReads[i].data, cmpReads[i].st
		switch {
		case c.Version == 0 && st == nil:
			// Absent: create and delete the highest missing znode, which
			// fails if anything appeared there.
			top, err := s.topMissing(p)
			if err != nil {
				return res, false, err
			}
			multi = append(multi, &zk.CreateRequest{Path: top, Acl: zk.WorldACL(zk.PermAll)},
				&zk.DeleteRequest{Path: top, Version: 0})
		case c.Version == 0 && data == nil:
			multi = append(multi, &zk.CheckVersionRequest{Path: p, Version: st.Version})
		case st != nil && data != nil && st.Mzxid == c.Version:
			multi = append(multi, &zk.CheckVersionRequest{Path: p, Version: st.Version})
		default:
			return res, false, nil
		}
	}
	guards := len(multi)
	for i, op := range ops {
		p, data, st := opPaths[i], targets[i].data, targets[i].st
		switch op.Type {
		case metastore.OpPut:
			value := op.Value
			if value == nil {
				value = []byte{}
			}
			var flags int32
			if op.Session != 0 {
				flags = zk.FlagEphemeral
			}
			switch {
			case st == nil:
				multi = append(multi, &zk.CreateRequest{Path: p, Data: value, Acl: zk.WorldACL(zk.PermAll), Flags: flags})
			case st.EphemeralOwner != int64(op.Session) && st.NumChildren == 0:
				// Bound to another session (or to none): a new znode.
				multi = append(multi, &zk.DeleteRequest{Path: p, Version: st.Version},
					&zk.CreateRequest{Path: p, Data: value, Acl: zk.WorldACL(zk.PermAll), Flags: flags})
			case st.EphemeralOwner != int64(op.Session):
				return res, false, fmt.Errorf("zkstore: put %q bound to session %d: it has children", op.Key, op.Session)
			default:
				multi = append(multi, &zk.SetDataRequest{Path: p, Data: value, Version: st.Version})
			}
		case metastore.OpDelete:
			switch {
			case st == nil || data == nil:
			case st.NumChildren == 0:
				multi = append(multi, &zk.DeleteRequest{Path: p, Version: st.Version})
			default:
				multi = append(multi, &zk.SetDataRequest{Path: p, Data: nil, Version: st.Version})
			}
		default:
			return res, false, fmt.Errorf("zkstore: unknown op type %d on key %q", op.Type, op.Key)
		}
	}
	multi = append(multi, &zk.SetDataRequest{Path: s.rootPath(), Data: nil, Version: -1})
	resps, err := conn.Multi(multi...)
	if err == nil {
		return metastore.TxnResult{Succeeded: true, Revision: resps[len(resps)-1].Stat.Mzxid}, false, nil
	}
	if len(resps) != len(multi) {
		return res, false, err
	}
	for i, r := range resps {
		if r.Error == nil {
			// The ops before the one that failed; those after carry a
			// runtime-inconsistency error.
			continue
		}
		switch {
		case i < guards && !errors.Is(r.Error, zk.ErrNoNode):
			return res, false, nil
		case errors.Is(r.Error, zk.ErrNodeExists), errors.Is(r.Error, zk.ErrNoNode),
			errors.Is(r.Error, zk.ErrBadVersion), errors.Is(r.Error, zk.ErrNotEmpty):
			return res, true, nil
		default:
			return res, false, fmt.Errorf("%s: %w", multiOpName(multi[i]), r.Error)
		}
	}
	return res, false, err
}

// read is a znode as stat read it.
type read struct {
	data []byte
	st   *zk.Stat
}

// readAll stats paths, up to MaxInFlight requests at once.
func (s *Store) readAll(paths []string) ([]read, error) {
	out := make([]read, len(paths))
	errs := make([]error, len(paths))
	sem := make(chan struct{}, s.cfg.MaxInFlight)
	var wg sync.WaitGroup
	for i, p := range paths {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].data, out[i].st, errs[i] = s.stat(p)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// stat reads a znode: st is nil if it does not exist, data nil if it holds
// no key.
func (s *Store) stat(path string) ([]byte, *zk.Stat, error) {
	data, st, err := s.conn.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil
	}
	return data, st, err
}

// topMissing is the highest missing znode on the way to path (path itself
// if its parent exists).
func (s *Store) topMissing(path string) (string, error) {
	top := path
	for p := parent(path); p != "/"; p = parent(p) {
		ok, _, err := s.conn.Exists(p)
		if err != nil {
			return "", err
		}
		if ok {
			break
		}
		top = p
	}
	return top, nil
}

// removeEmptyDirs deletes the implicit parents a Txn's deletes left
// without children, bottom up (best effort: ZooKeeper refuses to delete a
// znode that gained a child or data meanwhile).
func (s *Store) removeEmptyDirs(ops []metastore.Op) {
	for _, op := range ops {
		if op.Type != metastore.OpDelete {
			continue
		}
		for p := parent(s.root + op.Key); p != s.rootPath() && p != "/"; p = parent(p) {
			data, st, err := s.conn.Get(p)
			if err != nil || data != nil || st.NumChildren != 0 {
				break
			}
			if err := s.conn.Delete(p, st.Version); err != nil {
				break
			}
		}
	}
}

func multiOpName(op any) string {
	switch r := op.(type) {
	case *zk.CreateRequest:
		return "create " + r.Path
	case *zk.DeleteRequest:
		return "delete " + r.Path
	case *zk.SetDataRequest:
		return "set " + r.Path
	case *zk.CheckVersionRequest:
		return "check " + r.Path
	}
	return fmt.Sprintf("%T", op)
}

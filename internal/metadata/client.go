package metadata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Errors of the typed operations.
var (
	ErrBrokerIDInUse   = errors.New("metadata: broker id already registered")
	ErrControllerMoved = errors.New("metadata: controller moved (epoch changed)")
	ErrTopicExists     = errors.New("metadata: topic already exists")
	// ErrNotRegistered: the broker's registration is gone or belongs to
	// another session (its session ended, it registered again).
	ErrNotRegistered = errors.New("metadata: broker not registered in this session")
)

// Client is the typed view of the store.
type Client struct{ s metastore.Store }

// New wraps a store.
func New(s metastore.Store) *Client { return &Client{s: s} }

// Store is the underlying store.
func (c *Client) Store() metastore.Store { return c.s }

// EnsureClusterID creates /cluster/id with candidate unless it exists, and
// returns the stored id.
func (c *Client) EnsureClusterID(ctx context.Context, candidate string) (string, error) {
	doc, _ := json.Marshal(map[string]string{"version": "1", "id": candidate})
	if _, err := c.s.Txn(ctx, []metastore.Cmp{{Key: ClusterIDKey}}, []metastore.Op{metastore.Put(ClusterIDKey, doc)}); err != nil {
		return "", err
	}
	kv, _, err := c.s.Get(ctx, ClusterIDKey)
	if err != nil {
		return "", err
	}
	var v struct{ ID string }
	if err := json.Unmarshal(kv.Value, &v); err != nil || v.ID == "" {
		return "", fmt.Errorf("metadata: bad %s: %q", ClusterIDKey, kv.Value)
	}
	return v.ID, nil
}

// RegisterBroker creates /brokers/ids/<id> bound to sess and returns the
// broker epoch (the key's creation revision). A live registration of the
// same id is ErrBrokerIDInUse.
func (c *Client) RegisterBroker(ctx context.Context, sess metastore.Session, b Broker) (int64, error) {
	doc, _ := json.Marshal(b)
	key := BrokerKey(b.ID)
	res, err := c.s.Txn(ctx, []metastore.Cmp{{Key: key}}, []metastore.Op{metastore.PutBound(key, doc, sess.ID())})
	if err != nil {
		return 0, err
	}
	if !res.Succeeded {
		return 0, fmt.Errorf("%w: %d", ErrBrokerIDInUse, b.ID)
	}
	return res.Revision, nil
}

// UpdateBrokerRegistration rewrites the broker's live registration, as
// Kafka's KafkaZkClient.updateBrokerInfo does when its listeners change at
// run time: the key stays bound to sess and keeps its creation revision,
// so the broker epoch is unchanged. A registration gone or held by another
// session is ErrNotRegistered.
func (c *Client) UpdateBrokerRegistration(ctx context.Context, sess metastore.Session, b Broker) error {
	doc, _ := json.Marshal(b)
	key := BrokerKey(b.ID)
	for {
		kv, found, err := c.s.Get(ctx, key)
		if err != nil {
			return err
		}
		if !found || kv.Session != sess.ID() {
			return fmt.Errorf("%w: %d", ErrNotRegistered, b.ID)
		}
		res, err := c.s.Txn(ctx, []metastore.Cmp{{Key: key, Version: kv.Version}},
			[]metastore.Op{metastore.PutBound(key, doc, sess.ID())})
		if err != nil || res.Succeeded {
			return err
		}
	}
}

// DecodeBroker reads a /brokers/ids/<id> key.
func DecodeBroker(kv metastore.KV) (Broker, error) {
	var b Broker
	id, ok := ParseBrokerKey(kv.Key)
	if !ok {
		return b, fmt.Errorf("metadata: not a broker key: %q", kv.Key)
	}
	if err := json.Unmarshal(kv.Value, &b); err != nil {
		return b, fmt.Errorf("metadata: broker %d: %w", id, err)
	}
	b.ID, b.Epoch = id, kv.Created
	return b, nil
}

// Brokers lists the registered (live) brokers and the read revision.
func (c *Client) Brokers(ctx context.Context) ([]Broker, int64, error) {
	kvs, rev, err := c.s.List(ctx, BrokerIDsPrefix)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Broker, 0, len(kvs))
	for _, kv := range kvs {
		b, err := DecodeBroker(kv)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, b)
	}
	return out, rev, nil
}

// DecodeController reads the /controller document's broker id.
func DecodeController(v []byte) (int32, error) {
	var r ControllerRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return -1, fmt.Errorf("metadata: controller: %w", err)
	}
	return r.BrokerID, nil
}

// Controller reads the active controller's id, if any.
func (c *Client) Controller(ctx context.Context) (id int32, found bool, err error) {
	kv, found, err := c.s.Get(ctx, ControllerKey)
	if err != nil || !found {
		return -1, false, err
	}
	id, err = DecodeController(kv.Value)
	return id, err == nil, err
}

// TryBecomeController creates /controller bound to sess. won is false when
// another broker holds it. ctrlVersion identifies this tenure.
func (c *Client) TryBecomeController(ctx context.Context, sess metastore.Session, id int32, now time.Time) (won bool, ctrlVersion int64, err error) {
	doc, _ := json.Marshal(ControllerRecord{Version: 1, BrokerID: id, Timestamp: strconv.FormatInt(now.UnixMilli(), 10)})
	res, err := c.s.Txn(ctx, []metastore.Cmp{{Key: ControllerKey}}, []metastore.Op{metastore.PutBound(ControllerKey, doc, sess.ID())})
	if err != nil {
		return false, 0, err
	}
	if res.Succeeded {
		return true, res.Revision, nil
	}
	// The key exists: another broker's, or ours when an earlier try of
	// this write was applied without an answer (a store that retries).
	kv, found, err := c.s.Get(ctx, ControllerKey)
	if err != nil || !found || kv.Session != sess.ID() {
		return false, 0, err
	}
	return true, kv.Version, nil
}

// Fence is a controller's tenure: the epoch it wrote to /controller_epoch
// and the version of that write. Every fenced write compares Version.
type Fence struct {
	Epoch   int32
	Version int64
}

// IncrementControllerEpoch bumps /controller_epoch, provided /controller is
// still the one this broker created (ctrlVersion) and nobody else bumped
// the epoch in between. It returns the new fence.
func (c *Client) IncrementControllerEpoch(ctx context.Context, ctrlVersion int64) (Fence, error) {
	kv, found, err := c.s.Get(ctx, ControllerEpochKey)
	if err != nil {
		return Fence{}, err
	}
	epoch, ver := int64(0), int64(0)
	if found {
		if epoch, err = strconv.ParseInt(strings.TrimSpace(string(kv.Value)), 10, 32); err != nil {
			return Fence{}, fmt.Errorf("metadata: bad controller epoch %q", kv.Value)
		}
		ver = kv.Version
	}
	next := int32(epoch) + 1
	res, err := c.s.Txn(ctx,
		[]metastore.Cmp{{Key: ControllerKey, Version: ctrlVersion}, {Key: ControllerEpochKey, Version: ver}},
		[]metastore.Op{metastore.Put(ControllerEpochKey, []byte(strconv.Itoa(int(next))))})
	if err != nil {
		return Fence{}, err
	}
	if !res.Succeeded {
		return Fence{}, ErrControllerMoved
	}
	return Fence{Epoch: next, Version: res.Revision}, nil
}

// FencedTxn applies ops if the fence holds and cmps hold. applied=false
// with a nil error means a cmp failed; a lost fence is ErrControllerMoved.
func (c *Client) FencedTxn(ctx context.Context, f Fence, cmps []metastore.Cmp, ops []metastore.Op) (bool, error) {
	rev, err := c.FencedTxnRevision(ctx, f, cmps, ops)
	return rev > 0, err
}

// FencedWrite applies unconditional ops under the fence, in as many
// transactions as the store's limit needs (each one fenced).
func (c *Client) FencedWrite(ctx context.Context, f Fence, ops []metastore.Op) error {
	_, err := c.FencedWriteRevision(ctx, f, ops)
	return err
}

// FencedWriteRevision is FencedWrite returning the revision of its last
// transaction, which applies the last ops: as many as a transaction holds
// (the first ones take the rest).
func (c *Client) FencedWriteRevision(ctx context.Context, f Fence, ops []metastore.Op) (int64, error) {
	per := c.s.MaxTxnOps() - 1
	var rev int64
	for len(ops) > 0 {
		n := len(ops) % per
		if n == 0 {
			n = per
		}
		var err error
		if rev, err = c.FencedTxnRevision(ctx, f, nil, ops[:n]); err != nil {
			return 0, err
		}
		if rev == 0 {
			return 0, ErrControllerMoved
		}
		ops = ops[n:]
	}
	return rev, nil
}

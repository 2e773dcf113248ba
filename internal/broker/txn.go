package broker

// The transaction coordinator's place in the broker: its log is the
// __transaction_state partitions this broker leads (txnLog), it is told of
// their leadership by LeaderAndIsr and StopReplica (control.go), its
// markers go to the partitions' leaders — this broker included — over a
// kgo client per broker (txnClients), and its timers run on the broker's
// context. txnVerifier is api.TxnVerifier (KIP-890 part 1): a leader asks
// the transactional id's coordinator whether a partition is in the
// producer's transaction, directly when the coordinator is this broker,
// else with AddPartitionsToTxn v4 verify-only.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/txn"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// endTxnWait bounds how long EndTxn waits for its markers before it
// answers (txn.Config.EndTxnWait): long enough for markers on healthy
// leaders, short against a client's request timeout.
const endTxnWait = 2 * time.Second

// txnRequestTimeout bounds one WriteTxnMarkers or verification round trip.
const txnRequestTimeout = 30 * time.Second

// newTxnCoordinator makes the broker's transaction coordinator.
func (b *Broker) newTxnCoordinator() *txn.Coordinator {
	cfg := b.cfg
	b.txnClients = &txnClients{cache: b.cache, nodeID: b.nodeID, clients: map[int32]*txnClient{}}
	return txn.NewCoordinator(txn.Config{
		Partitions: cfg.TxnStateNumPartitions,
		PartitionCount: func() int32 {
			t, _ := b.cache.Topic(api.TxnStateTopic)
			return int32(len(t.Partitions))
		},
		MaxTimeout:     cfg.TxnMaxTimeout,
		IDExpiration:   cfg.TxnIDExpiration,
		AbortInterval:  cfg.TxnAbortCheckInterval,
		ExpireInterval: cfg.TxnExpireCheckInterval,
		EndTxnWait:     endTxnWait,
		ProducerID:     b.pids.Next,
		Log:            newTxnLog(b.replicas),
		Markers: txn.NewChannel(txn.ChannelConfig{Sender: b.txnClients, Leader: partitionLeader(b.cache),
			Logger: b.log.With("component", "txn-markers")}),
		Logger: b.log.With("component", "txn-coordinator"),
	})
}

// lowerTxnStateReplication is lowerOffsetsReplication for
// __transaction_state.
func (b *Broker) lowerTxnStateReplication() bool {
	_, set := b.cfg.Explicit()["transaction.state.log.replication.factor"]
	return b.embedded != nil && !set
}

// partitionLeader is the marker channel's view of leaders: a partition the
// cache does not know, or one being deleted, is gone.
func partitionLeader(cache *metacache.Cache) func(kafka.TopicPartition) (int32, bool) {
	return func(tp kafka.TopicPartition) (int32, bool) {
		p, ok := cache.Partition(tp.Topic, tp.Partition)
		if !ok || p.Leader == kafka.LeaderDuringDelete {
			return -1, false
		}
		return p.Leader, true
	}
}

// txnLog is txn.Log over this broker's __transaction_state replicas.
type txnLog struct{ coordLog }

func newTxnLog(replicas *replica.Manager) *txnLog {
	return &txnLog{coordLog{replicas: replicas, topic: api.TxnStateTopic}}
}

// Load reads the partition's records from its start to its log end offset.
func (l *txnLog) Load(ctx context.Context, partition int32, fn func(offset int64, key, value []byte)) error {
	return l.read(ctx, partition, func(b []byte) (int64, error) { return txnRecords(b, fn) })
}

// txnRecords calls fn for the records of whole batches and returns the
// offset after the last batch.
func txnRecords(b []byte, fn func(offset int64, key, value []byte)) (int64, error) {
	var next int64
	for len(b) > 0 {
		h, err := record.ReadHeader(b)
		if err != nil || h.Size() > len(b) {
			break
		}
		if !h.Control() {
			err = record.Records(b[:h.Size()], func(r record.Record) bool {
				fn(r.Offset, r.Key, r.Value)
				return true
			})
			if err != nil {
				return next, err
			}
		}
		next = h.LastOffset() + 1
		b = b[h.Size():]
	}
	return next, nil
}

// txnClients keeps a kgo client per broker for the coordinator's requests
// to other brokers (and to itself: one code path), replaced when a
// broker's address changes.
type txnClients struct {
	cache   *metacache.Cache
	nodeID  int32
	mu      sync.Mutex
	clients map[int32]*txnClient
	closed  bool
}

type txnClient struct {
	addr string
	cl   *kgo.Client
}

var _ txn.Sender = (*txnClients)(nil)

func (t *txnClients) client(broker int32) (*kgo.Client, error) {
	addr := ""
	for _, b := range t.cache.Brokers() {
		if b.ID == broker && b.Port >= 0 { // on the inter-broker listener
			addr = fmt.Sprintf("%s:%d", b.Host, b.Port)
		}
	}
	if addr == "" {
		return nil, fmt.Errorf("broker: no address for broker %d", broker)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("broker: stopping")
	}
	if c := t.clients[broker]; c != nil {
		if c.addr == addr {
			return c.cl, nil
		}
		c.cl.Close()
		delete(t.clients, broker)
	}
	cl, err := wire.BrokerClient(addr, fmt.Sprintf("broker-%d-txn-coordinator", t.nodeID), txnRequestTimeout)
	if err != nil {
		return nil, err
	}
	t.clients[broker] = &txnClient{addr: addr, cl: cl}
	return cl, nil
}

// SendMarkers sends one WriteTxnMarkers to a broker.
func (t *txnClients) SendMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	cl, err := t.client(broker)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, txnRequestTimeout)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(rctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.WriteTxnMarkersResponse), nil
}

func (t *txnClients) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for id, c := range t.clients {
		c.cl.Close()
		delete(t.clients, id)
	}
}

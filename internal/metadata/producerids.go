package metadata

// Producer id blocks, as Kafka's ZooKeeper mode hands them out
// (ZkProducerIdManager.getNewProducerIdBlock): /latest_producer_id_block
// holds the last block any broker claimed; a broker claims the next one
// by reading the key and writing the block after it conditional on the
// version it read, and reads again when another broker got there first.
// Every id of a block belongs to the broker that claimed it, so brokers
// issue ids without talking to each other, and a restarted broker claims
// a fresh block instead of reusing one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// ProducerIDBlockSize is the number of ids in a block (Kafka's
// ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const ProducerIDBlockSize = 1000

// ErrProducerIDsExhausted: the next block would pass math.MaxInt64.
var ErrProducerIDsExhausted = errors.New("metadata: producer ids exhausted")

// ProducerIDBlock is the ids First..Last (inclusive) claimed by Broker.
type ProducerIDBlock struct {
	Broker      int32
	First, Last int64
}

// Size is the number of ids in the block.
func (b ProducerIDBlock) Size() int64 { return b.Last - b.First + 1 }

// NextProducerIDBlock is the block broker claims after latest, the block
// the store holds (found false: none yet, the first block starts at 0).
func NextProducerIDBlock(latest ProducerIDBlock, found bool, broker int32) (ProducerIDBlock, error) {
	if !found {
		return ProducerIDBlock{Broker: broker, First: 0, Last: ProducerIDBlockSize - 1}, nil
	}
	if latest.Last > math.MaxInt64-ProducerIDBlockSize {
		return ProducerIDBlock{}, fmt.Errorf("%w: latest block ends at %d", ErrProducerIDsExhausted, latest.Last)
	}
	return ProducerIDBlock{Broker: broker, First: latest.Last + 1, Last: latest.Last + ProducerIDBlockSize}, nil
}

// producerIDBlockDoc is Kafka's ProducerIdBlockZNode JSON:
// {"version":1,"broker":1,"block_start":"0","block_end":"999"} (the ids
// are strings).
type producerIDBlockDoc struct {
	Version    int   `json:"version"`
	Broker     int32 `json:"broker"`
	BlockStart int64 `json:"block_start,string"`
	BlockEnd   int64 `json:"block_end,string"`
}

// EncodeProducerIDBlock is the /latest_producer_id_block document of b.
func EncodeProducerIDBlock(b ProducerIDBlock) []byte {
	doc, _ := json.Marshal(producerIDBlockDoc{Version: 1, Broker: b.Broker, BlockStart: b.First, BlockEnd: b.Last})
	return doc
}

// DecodeProducerIDBlock reads a /latest_producer_id_block document.
func DecodeProducerIDBlock(v []byte) (ProducerIDBlock, error) {
	var d producerIDBlockDoc
	if err := json.Unmarshal(v, &d); err != nil {
		return ProducerIDBlock{}, fmt.Errorf("metadata: producer id block %q: %w", v, err)
	}
	if d.BlockStart < 0 || d.BlockEnd < d.BlockStart {
		return ProducerIDBlock{}, fmt.Errorf("metadata: producer id block %q: bad range", v)
	}
	return ProducerIDBlock{Broker: d.Broker, First: d.BlockStart, Last: d.BlockEnd}, nil
}

// LatestProducerIDBlock reads the last claimed block; found is false when
// no broker has claimed one yet.
func (c *Client) LatestProducerIDBlock(ctx context.Context) (b ProducerIDBlock, found bool, err error) {
	b, _, found, err = c.latestProducerIDBlock(ctx)
	return b, found, err
}

func (c *Client) latestProducerIDBlock(ctx context.Context) (ProducerIDBlock, int64, bool, error) {
	kv, found, err := c.s.Get(ctx, ProducerIDBlockKey)
	if err != nil || !found {
		return ProducerIDBlock{}, 0, false, err
	}
	b, err := DecodeProducerIDBlock(kv.Value)
	return b, kv.Version, err == nil, err
}

// ClaimProducerIDBlock claims the block after the latest one for broker:
// it writes the block conditional on the version of the key it read, and
// starts again from the read when another broker's claim came between
// (every conflict is another broker's progress, so it ends; ctx bounds
// it). Two claims never return overlapping blocks.
func (c *Client) ClaimProducerIDBlock(ctx context.Context, broker int32) (ProducerIDBlock, error) {
	for {
		latest, version, found, err := c.latestProducerIDBlock(ctx)
		if err != nil {
			return ProducerIDBlock{}, err
		}
		next, err := NextProducerIDBlock(latest, found, broker)
		if err != nil {
			return ProducerIDBlock{}, err
		}
		res, err := c.s.Txn(ctx, []metastore.Cmp{{Key: ProducerIDBlockKey, Version: version}},
			[]metastore.Op{metastore.Put(ProducerIDBlockKey, EncodeProducerIDBlock(next))})
		if err != nil {
			return ProducerIDBlock{}, err
		}
		if res.Succeeded {
			return next, nil
		}
		if err := ctx.Err(); err != nil {
			return ProducerIDBlock{}, err
		}
	}
}

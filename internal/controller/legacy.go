package controller

// Stores written by earlier Samsa builds hold partition states under
// Kafka's per-partition keys, /brokers/topics/<t>/partitions/<p>/state. A
// controller taking over keeps those states (leader epochs and ISRs stay
// as they were, so brokers accept what it sends), writes them into state
// chunks and deletes the old keys, all under its fence. Where a chunk
// already holds a partition (a migration cut short), the chunk wins.

import (
	"context"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// addLegacy records a state found under a per-partition key.
func (cx *Context) addLegacy(tp TP, st metadata.LeaderAndIsr) { cx.legacy[tp] = st }

// adoptLegacy gives partitions without a state their per-partition one.
func (cx *Context) adoptLegacy() {
	for tp, st := range cx.legacy {
		if _, ok := cx.states.get(tp); !ok && cx.topics[tp.Topic] != nil {
			cx.setState(tp, st)
		}
	}
}

// migrateLegacy writes the adopted states into chunks and deletes every
// per-partition key.
func (c *Controller) migrateLegacy(ctx context.Context) error {
	cx := c.ctx
	if len(cx.legacy) == 0 {
		return nil
	}
	tps := make([]TP, 0, len(cx.legacy))
	ops := make([]metastore.Op, 0, len(cx.legacy))
	for tp := range cx.legacy {
		tps = append(tps, tp)
		ops = append(ops, metastore.Delete(metadata.LegacyStateKey(tp.Topic, tp.Partition)))
	}
	sortTPs(tps)
	// What the context holds is written: the adopted state, or after a
	// conflict what the re-read chunk holds (the chunk wins), or the old
	// key's state again when that chunk lacks the partition.
	err := c.settleStates(ctx, tps, func(tp TP) (metadata.LeaderAndIsr, bool) {
		if st, ok := cx.states.get(tp); ok {
			return st, true
		}
		st, ok := cx.legacy[tp]
		return st, ok && cx.topics[tp.Topic] != nil
	}, func(stateUpdate) {})
	if err != nil {
		return err
	}
	if err := c.md.FencedWrite(ctx, cx.fence, ops); err != nil {
		return err
	}
	c.cfg.Logger.Info("moved partition states from per-partition keys into state chunks", "partitions", len(cx.legacy))
	clear(cx.legacy)
	return nil
}

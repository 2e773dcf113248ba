package txn

// The coordinator's timers (Kafka's abortTimedOutTransactions and
// removeExpiredTransactionalIds): every AbortInterval, transactions open
// longer than their timeout are aborted with the producer fenced (epoch
// bumped, as Kafka); every ExpireInterval, ids without a transaction left
// unchanged for IDExpiration are removed (tombstone, Dead).

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Run runs the timers until ctx ends, then waits for the loads, markers
// and writes it started.
func (c *Coordinator) Run(ctx context.Context) {
	defer c.wg.Wait()
	defer func() {
		c.mu.Lock()
		c.closed = true // no wg.Add after this, so the Wait above is final
		c.mu.Unlock()
		c.cancel()
	}()
	abort := ticker(c.cfg.AbortInterval)
	defer abort.Stop()
	expire := ticker(c.cfg.ExpireInterval)
	defer expire.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-abort.C:
			c.AbortTimedOut()
		case <-expire.C:
			c.RemoveExpired()
		}
	}
}

func ticker(d time.Duration) *time.Ticker {
	if d <= 0 {
		t := time.NewTicker(time.Hour)
		t.Stop() // never fires
		return t
	}
	return time.NewTicker(d)
}

// due lists the loaded ids that pass pred, in order; c.mu held.
func (c *Coordinator) due(pred func(*Metadata) bool) []*Metadata {
	var out []*Metadata
	for _, m := range c.txns {
		if p := c.parts[c.PartitionFor(m.ID)]; p != nil && !p.loading && pred(m) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *Metadata) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// AbortTimedOut aborts every transaction open longer than its timeout,
// fencing its producer.
func (c *Coordinator) AbortTimedOut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	for _, m := range c.due(func(m *Metadata) bool { return m.TimedOut(now) }) {
		p, ps, cur, err := c.lookup(m.ID)
		if err != nil || cur != m || !m.TimedOut(now) { // changed while a write waited
			continue
		}
		tr, err := m.PrepareFenceAbort(now)
		if err != nil {
			c.refusal(err)
			continue
		}
		c.log.Info("aborting a timed-out transaction", "transactional_id", m.ID, "producer_id", m.ProducerID,
			"epoch", tr.ProducerEpoch, "timeout_ms", m.TimeoutMs)
		if err := c.write(c.ctx, m, p, ps, tr, false); err == nil {
			c.startMarkers(m, p, ps)
		}
	}
}

// RemoveExpired removes the ids expired by transactional.id.expiration.ms.
func (c *Coordinator) RemoveExpired() {
	if c.cfg.IDExpiration <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	for _, m := range c.due(func(m *Metadata) bool { return m.Expired(now, c.cfg.IDExpiration) }) {
		p, ps, cur, err := c.lookup(m.ID)
		if err != nil || cur != m || !m.Expired(now, c.cfg.IDExpiration) {
			continue
		}
		tr, err := m.PrepareDead(now)
		if err != nil {
			c.refusal(err)
			continue
		}
		if err := c.write(c.ctx, m, p, ps, tr, false); err == nil {
			c.log.Info("removed an expired transactional id", "transactional_id", m.ID)
		}
	}
}

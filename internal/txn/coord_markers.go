package txn

// After a PrepareCommit or PrepareAbort is written, the transaction's
// markers go to its partitions (Markers) while Complete* is pending; once
// every partition has its marker, Complete* is written, retried until it is
// or the partition is lost (Kafka's addTxnMarkersToSend and
// TxnLogAppend retries).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// MarkerJob is one transaction's markers.
type MarkerJob struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	Commit           bool
	Partitions       []kafka.TopicPartition
}

// Markers writes a transaction's markers to its partitions (Channel).
type Markers interface {
	// Write returns once every partition has its marker (calling
	// written for each as it is), or with an error once the job cannot
	// finish: ctx ended, or a partition answered that a newer producer
	// epoch or coordinator exists.
	Write(ctx context.Context, job MarkerJob, written func(kafka.TopicPartition)) error
}

// startMarkers sends the markers of m, just written in PrepareCommit or
// PrepareAbort, and completes it; c.mu held. The channel returned is
// closed once that is over (Complete* written, or given up).
func (c *Coordinator) startMarkers(m *Metadata, p int32, ps *partState) <-chan struct{} {
	over := make(chan struct{})
	tr, err := m.PrepareComplete(c.cfg.Now())
	if err != nil {
		c.log.Error("transaction coordinator: completing", "transactional_id", m.ID, "err", err)
		close(over)
		return over
	}
	job := MarkerJob{TransactionalID: m.ID, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		CoordinatorEpoch: ps.epoch, Commit: m.State == PrepareCommit, Partitions: m.SortedPartitions()}
	if c.cfg.Markers == nil || c.closed {
		close(over)
		return over
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(over)
		err := c.cfg.Markers.Write(ps.ctx, job, func(tp kafka.TopicPartition) {
			c.mu.Lock()
			if c.txns[m.ID] == m {
				m.RemovePartition(tp)
			}
			c.mu.Unlock()
		})
		if err != nil {
			if ps.ctx.Err() == nil {
				c.log.Info("stopped sending a transaction's markers", "transactional_id", m.ID, "err", err)
			}
			return
		}
		c.complete(m, p, ps, tr)
	}()
	return over
}

// complete writes the Complete* of a transaction whose markers are all
// written, retrying until it is written or the partition is no longer
// this broker's.
func (c *Coordinator) complete(m *Metadata, p int32, ps *partState, tr *Transit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.parts[p] != ps || c.txns[m.ID] != m || ps.ctx.Err() != nil {
			return
		}
		err := c.write(ps.ctx, m, p, ps, tr, true)
		if err == nil || err == kerr.NotCoordinator {
			return
		}
		c.mu.Unlock()
		select {
		case <-ps.ctx.Done():
		case <-time.After(c.cfg.RetryBackoff):
		}
		c.mu.Lock()
	}
}

package broker

// Replication's moving parts on a broker (Kafka's ReplicaManager shell):
//
//   - the follower fetchers (internal/fetcher), num.replica.fetchers per
//     leader broker (resized when the dynamic config changes), fed
//     by LeaderAndIsr: partitions this broker follows are (re)targeted at
//     their leader, partitions it leads or stops hosting are taken away
//     first (control.go);
//   - the AlterPartition sender (internal/alterpartition): a leader's ISR
//     proposals go to the controller, whose answer the partition adopts;
//   - the ISR shrink check, every replica.lag.time.max.ms / 2 as Kafka's
//     isr-expiration task.
//
// Broker addresses come from the metadata cache (UpdateMetadata), which the
// controller keeps current before it sends LeaderAndIsr.

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/samsa-kafka/samsa/internal/alterpartition"
	"github.com/samsa-kafka/samsa/internal/fetcher"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// startReplication creates the fetchers and the AlterPartition sender and
// wires the partitions' ISR proposals to the sender.
func (b *Broker) startReplication() {
	cfg := b.current() // num.replica.fetchers may be dynamic
	b.fetchers = fetcher.NewManager(fetcher.Config{
		NodeID:           b.nodeID,
		BrokerAddr:       b.brokerAddr,
		MaxBytes:         cfg.ReplicaFetchMaxBytes,
		ResponseMaxBytes: cfg.ReplicaFetchResponseMax,
		MinBytes:         cfg.ReplicaFetchMinBytes,
		MaxWait:          cfg.ReplicaFetchWaitMax,
		Backoff:          cfg.ReplicaFetchBackoff,
		SocketTimeout:    cfg.ReplicaSocketTimeout,
		NumFetchers:      int(cfg.NumReplicaFetchers),
		Logger:           b.log.With("component", "replica-fetcher"),
		Stats:            &b.stats,
	})
	b.alter = alterpartition.New(alterpartition.Config{
		NodeID:      b.nodeID,
		BrokerEpoch: b.cache.BrokerEpoch,
		Controller:  b.controllerAddr,
		Logger:      b.log.With("component", "alter-partition"),
	})
	b.replicas.SetISRProposer(func(p replica.ISRProposal) {
		item := alterpartition.Item{TP: p.TP, TopicID: p.TopicID, LeaderEpoch: p.LeaderEpoch,
			PartitionEpoch: p.PartitionEpoch, NewISR: p.NewISR}
		b.alter.Submit(item, func(r alterpartition.Result) {
			if part := b.replicas.Get(p.TP); part != nil {
				part.ApplyISRResult(p, replica.ISRResult{ErrorCode: r.ErrorCode, LeaderEpoch: r.LeaderEpoch,
					PartitionEpoch: r.PartitionEpoch, ISR: r.ISR})
			}
		})
	})
}

// shrinkISRs runs Kafka's isr-expiration task until ctx ends.
func (b *Broker) shrinkISRs(ctx context.Context) {
	every := max(b.cfg.ReplicaLagTimeMax/2, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			b.replicas.ShrinkISRs(now)
		}
	}
}

// brokerAddr is a live broker's address on the inter-broker listener, as
// the metadata cache knows it.
func (b *Broker) brokerAddr(id int32) (string, bool) {
	return b.addrOn(id, b.cfg.InterBrokerListenerName)
}

func (b *Broker) addrOn(id int32, listener string) (string, bool) {
	for _, br := range b.cache.BrokersOn(listener) {
		if br.ID == id {
			return net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port))), true
		}
	}
	return "", false
}

// controllerAddr is the active controller and its address on the
// control-plane listener, else the inter-broker one (Kafka's
// MetadataCacheControllerNodeProvider).
func (b *Broker) controllerAddr() (int32, string, bool) {
	id := b.cache.ControllerID()
	if id < 0 {
		return -1, "", false
	}
	addr, ok := b.addrOn(id, b.cfg.ControllerToBrokerListenerName())
	return id, addr, ok
}

var _ fetcher.Partition = (*replica.Partition)(nil)

package broker

import "github.com/samsa-kafka/samsa/internal/producerid"

// newProducerIDs is the broker's producer id manager (Kafka's
// ProducerIdManager in ZooKeeper mode): InitProducerId hands out ids from
// blocks it claims in the store; Produce asks it whether an id was issued.
// Its Run goroutine claims the blocks until the broker's context ends.
func (b *Broker) newProducerIDs() *producerid.Manager {
	return producerid.New(producerid.Config{Broker: b.nodeID, Meta: b.md, Logger: b.log.With("component", "producer-ids")})
}

package config

// txnSettings: the transaction coordinator (internal/txn) and its topic,
// __transaction_state, with Kafka's names and defaults.
var txnSettings = []setting{
	bind(func(b *Broker) any { return &b.TxnStateReplication },
		tShort("transaction.state.log.replication.factor", "3", atLeast(1), "Replication factor of the transaction topic.")),
	bind(func(b *Broker) any { return &b.TxnStateMinISR },
		tInt("transaction.state.log.min.isr", "2", atLeast(1), "min.insync.replicas of the transaction topic.")),
	bind(func(b *Broker) any { return &b.TxnStateNumPartitions },
		tInt("transaction.state.log.num.partitions", "50", atLeast(1), "Partitions of the transaction topic (should not change after deployment).")),
	bind(func(b *Broker) any { return &b.TxnStateSegmentBytes },
		tInt("transaction.state.log.segment.bytes", "104857600", atLeast(1), "Segment size of the transaction topic.")),
	bind(func(b *Broker) any { return &b.TxnMaxTimeout },
		msInt("transaction.max.timeout.ms", "900000", atLeast(1), "The largest transaction timeout a producer may ask for.")),
	bind(func(b *Broker) any { return &b.TxnIDExpiration },
		msInt("transactional.id.expiration.ms", "604800000", atLeast(1), "A transactional id without a transaction, unchanged this long, is removed.")),
	bind(func(b *Broker) any { return &b.TxnAbortCheckInterval },
		msInt("transaction.abort.timed.out.transaction.cleanup.interval.ms", "10000", atLeast(1), "How often timed-out transactions are looked for and aborted.")),
	bind(func(b *Broker) any { return &b.TxnExpireCheckInterval },
		msInt("transaction.remove.expired.transaction.cleanup.interval.ms", "3600000", atLeast(1), "How often expired transactional ids are removed.")),
}

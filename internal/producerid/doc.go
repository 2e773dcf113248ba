// Package producerid issues the producer ids of idempotent producers
// (InitProducerId) and tells whether an id was ever issued (Produce), as
// Kafka's ZooKeeper-era ProducerIdManager does: ids come in blocks of
// metadata.ProducerIDBlockSize claimed from the coordination store
// (/latest_producer_id_block, metadata/producerids.go), and a broker hands
// out the ids of its current block in order.
//
// Invariants: an id is handed out at most once in the cluster's life — a
// block is claimed with a write conditional on the version of the block
// before it, and a restarted broker claims a new block rather than resume
// an old one (the ids left in it are skipped, never reused). Issued never
// says false for an id some broker handed out: ids above the highest block
// end it knows of make it read the store again.
//
// Structure: allocator (allocator.go) is the deterministic core — the
// current block, the prefetched next block, when to claim — with no I/O
// and no goroutines. Manager (manager.go) is the shell: it asks for the
// next block when 90% of the current one is used, so Next waits on the
// store only when the broker has no block at all (its first id, or ids
// issued faster than a claim takes).
//
// Goroutines: Manager.Run, owned by the caller (the broker), claims blocks;
// it ends with its context. Next and Issued run on the caller's goroutine;
// Issued may read the store there.
package producerid

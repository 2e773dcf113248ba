// Package metadata is Kafka's ZooKeeper layout on top of metastore — the
// KafkaZkClient analogue: key names, the JSON documents stored under them,
// and typed reads and writes.
//
// Keys (DESIGN §1): /controller, /controller_epoch, /brokers/ids/<id>,
// /brokers/topics/<topic>, /admin/delete_topics/<topic>,
// /admin/reassign_partitions, /config/topics/<topic>, /cluster/id. Where
// Kafka has a znode per partition state, states are kept in chunks of
// StateChunkSize partitions, /brokers/topics/<topic>/states/<n>
// (chunks.go): elections write a key per chunk, not per partition.
//
// /latest_producer_id_block is Kafka's ProducerIdBlockZNode,
// {"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"}:
// the last block of ProducerIDBlockSize producer ids a broker claimed. A
// claim reads it and writes the next block conditional on the version read
// (producerids.go), so no two brokers ever hold overlapping blocks; it is
// never fenced by the controller (any broker claims) and never deleted.
//
// Fencing: a controller's writes go through a Fence holding the version of
// /controller_epoch it wrote; every write transaction first compares that
// version, so a deposed controller's writes fail with ErrControllerMoved and
// never land. State-chunk writes are conditional on each chunk's
// version and batched many chunks per transaction within the store's
// limits; a failed batch is re-tried chunk by chunk to tell version
// conflicts from a lost fence. Several such transactions are in flight at
// once, so that a large write waits for a few commits, not one per batch.
//
// Goroutines: only WriteChunks' short-lived writers; it returns when they
// are done.
package metadata

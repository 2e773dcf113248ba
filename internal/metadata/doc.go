// Package metadata is Kafka's ZooKeeper layout on top of metastore — the
// KafkaZkClient analogue: key names, the JSON documents stored under them,
// and typed reads and writes.
//
// Keys (DESIGN §1): /controller, /controller_epoch, /brokers/ids/<id>,
// /brokers/topics/<topic>, /brokers/topics/<topic>/partitions/<p>/state,
// /admin/delete_topics/<topic>, /admin/reassign_partitions,
// /config/topics/<topic>, /cluster/id.
//
// Fencing: a controller's writes go through a Fence holding the version of
// /controller_epoch it wrote; every write transaction first compares that
// version, so a deposed controller's writes fail with ErrControllerMoved and
// never land. Partition-state writes are conditional on each state's
// version and batched many partitions per transaction within the store's
// limits; a failed batch is re-tried partition by partition to tell version
// conflicts from a lost fence. Several such transactions are in flight at
// once, so that a large write waits for a few commits, not one per batch.
//
// Goroutines: only WriteStates' short-lived writers; it returns when they
// are done.
package metadata

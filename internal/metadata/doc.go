// Package metadata is Kafka's ZooKeeper layout on top of metastore — the
// KafkaZkClient analogue: key names, the JSON documents stored under them,
// and typed reads and writes.
//
// # Store layout
//
// The layout is DESIGN §1's, Kafka's znodes as keys, with one difference:
// partition states live in state chunks. These are all the keys Samsa
// writes; there is no other layout to read or migrate.
//
//	/cluster/id                       {"version":"1","id":<cluster id>}; created once (EnsureClusterID)
//	/controller                       {"version":1,"brokerid":<id>,"timestamp":<ms>}, bound to the
//	                                  controller's session (TryBecomeController)
//	/controller_epoch                 the epoch as a decimal integer; +1 at every failover, conditional
//	                                  on /controller (IncrementControllerEpoch); its version is the fence
//	/brokers/ids/<id>                 Kafka's version 5 broker document, bound to the broker's session;
//	                                  its creation revision is the broker epoch (RegisterBroker); rewritten
//	                                  in place when its listeners change (UpdateBrokerRegistration)
//	/brokers/topics/<topic>           Kafka's version 3 assignment: topic id, partition → replicas,
//	                                  adding_replicas/removing_replicas while a reassignment runs
//	                                  (KIP-455, reassignment.go); admin path and controller
//	/brokers/topics/<topic>/states/<n>  the states of partitions [n*StateChunkSize, (n+1)*StateChunkSize)
//	                                  (chunks.go); controller only, fenced, conditional on the chunk's version
//	/admin/delete_topics/<topic>      an empty marker: deletion requested (MarkTopicForDeletion)
//	/config/topics/<topic>            {"version":1,"config":{...}}: topic config overrides
//	/config/brokers/<id>              {"version":1,"config":{...}}: dynamic broker configs of one broker
//	/config/brokers/<default>         the same for every broker (configs.go); any broker writes these
//	                                  and /config/topics/<topic> conditional on the version it read
//	/latest_producer_id_block         the last producer id block claimed (below)
//
// Where Kafka has a znode per partition state
// (/brokers/topics/<t>/partitions/<p>/state), Samsa keeps one chunk key per
// StateChunkSize partitions, so that an election writes a key per chunk,
// not per partition (DESIGN §6); each state row still carries its leader
// epoch and its partition epoch (Kafka's zkVersion). Kafka's
// /admin/reassign_partitions (ReassignKey) is not written: pending
// reassignments live in the assignment documents, as Kafka 2.4+ keeps them.
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
// Codecs: documents are read and written with encoding/json, except the
// two a large cluster has by the hundred thousand — assignments and state
// chunks — which fastcodec.go and chunks.go read and write by hand;
// FuzzAssignment and FuzzStateChunk hold them to encoding/json.
//
// Goroutines: only WriteChunks' short-lived writers; it returns when they
// are done.
package metadata

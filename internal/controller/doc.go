// Package controller is Samsa's controller, after Apache Kafka's
// ZooKeeper-era KafkaController: one broker at a time wins /controller in the
// coordination store, bumps /controller_epoch (the fence for all its writes),
// loads the cluster into a Context and drives partition and replica state
// changes, telling brokers through LeaderAndIsr, UpdateMetadata and
// StopReplica batches.
//
// Files map to Kafka's: context.go (ControllerContext; topics.go and
// tables.go hold its per-topic tables), batch.go
// (ControllerBrokerRequestBatch), election.go (PartitionLeaderElectionAlgorithms),
// partitions.go (PartitionStateMachine), replicas.go (ReplicaStateMachine),
// controller.go (the event handlers of KafkaController), loop.go
// (ControllerEventManager: the one goroutine), sender.go
// (ControllerChannelManager), deletion.go (TopicDeletionManager),
// failover.go (onControllerFailover, onBrokerStartup/Failure), standby.go
// (the warm standby's mirror of the store; warmchunks.go decodes its
// state chunks lazily, when the Loop says), updatemetadata.go
// (UpdateMetadata bodies), staged.go (events writing each
// state chunk once), alterpartition.go (processAlterPartition,
// KIP-497), controlled_shutdown.go (doControlledShutdown),
// elect_leaders.go and auto_rebalance*.go (onReplicaElection,
// checkAndTriggerAutoLeaderRebalance), reassignment*.go
// (onPartitionReassignment, KIP-455).
//
// Invariants: exactly one goroutine — the loop — calls Controller methods;
// everything else (store watches, broker responses, API handlers) enqueues
// events. Every store write of an active controller is fenced by the
// version of /controller_epoch it wrote; ErrControllerMoved makes it resign
// at once. The core (Controller) starts no goroutines and reads time and
// the store only through its arguments, so tests drive it event by event
// with an in-memory store and a recording Sender.
package controller

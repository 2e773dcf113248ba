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
// controller.go (the event handlers of KafkaController), events.go and
// loop.go (ControllerEventManager: the events, the one goroutine), the
// Sender interface (ControllerChannelManager's, in controller.go; package
// channel implements it over sockets), deletion.go (TopicDeletionManager),
// failover.go (onControllerFailover with the state machines' startup,
// onBrokerStartup/Failure), standby.go (Kafka's watches: the store
// changes every controller follows, the warm standby's mirror of the store;
// warmchunks.go decodes its state chunks lazily, when the Loop says),
// updatemetadata.go (UpdateMetadata bodies), chunks.go and staged.go
// (partition-state writes, per state chunk), alterpartition.go
// (processAlterPartition, KIP-497), controlled_shutdown.go
// (doControlledShutdown), elect_leaders.go and auto_rebalance*.go
// (onReplicaElection, checkAndTriggerAutoLeaderRebalance), reassignment*.go
// (onPartitionReassignment, KIP-455), unclean.go
// (unclean.leader.election.enable from topic and broker configs, Kafka's
// UncleanLeaderElectionEnable event), statelog.go (state-change.log).
//
// Events: what Kafka's ZooKeeper watches deliver as ControllerChange,
// BrokerChange, BrokerModification, TopicChange and TopicDeletion events
// reaches the loop as store changes: the Loop reads the whole store once,
// then watches it, and queues each watch response (consecutive ones
// merged); onStoreChange folds them into the context and runs the same
// handlers. API requests (AlterPartition, ControlledShutdown,
// ElectLeaders, reassignments) and broker responses are events of their
// own. Handle logs and counts an event it has no case for.
//
// Invariants: exactly one goroutine — the loop — calls Controller methods;
// everything else (store watches, broker responses, API handlers) enqueues
// events. Every store write of an active controller is fenced by the
// version of /controller_epoch it wrote; ErrControllerMoved makes it resign
// at once. The core (Controller) starts no goroutines and reads time and
// the store only through its arguments. Tests run it as production does,
// through its Loop's queue fed by an in-memory store's watch, but on the
// test's goroutine (harness_test.go), with a recording Sender; the scenario
// scripts in testdata/ are written that way.
package controller

// Package metacache is a broker's view of the cluster, fed by the
// controller's UpdateMetadata requests (Kafka's ZkMetadataCache): live
// brokers, the controller, and every partition's leader, leader epoch,
// replicas, ISR and offline replicas, plus topic config overrides from the
// store. Metadata and DescribeCluster answer from it (it implements
// api.Metadata). Live brokers keep every endpoint of UpdateMetadata:
// BrokersOn(listener) is what a client on that listener is told, Brokers
// every live broker at its inter-broker address.
//
// It also keeps the fencing state of controller requests: the highest
// controller epoch seen and this broker's epoch. CheckEpochs applies Kafka's
// rules (STALE_CONTROLLER_EPOCH, STALE_BROKER_EPOCH) for every controller
// request, and ApplyUpdateMetadata checks and applies under one lock, so a
// deposed controller's request can never land after its successor's.
//
// It says when the broker may serve clients (ready.go): once registered and
// caught up with an UpdateMetadata sent for that registration.
//
// Invariants: a topic exists in the cache iff it has at least one partition;
// a partition whose leader is -2 (LeaderDuringDelete) is removed. Topics()
// and Topic() results are shared, built lazily after a change and must not
// be modified by callers.
//
// Goroutines: none. A Cache is safe for concurrent use.
package metacache

package api

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/txn"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// BrokerInfo is one live broker as clients see it.
type BrokerInfo struct {
	ID   int32
	Host string
	Port int32
	Rack *string
}

// PartitionInfo is a partition's leadership as the metadata cache knows it.
type PartitionInfo struct {
	ID          int32
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	Offline     []int32
}

// TopicInfo is a topic as the metadata cache knows it.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Internal   bool
	Partitions []PartitionInfo
	Configs    map[string]string // per-topic overrides
}

// Metadata is the cluster view the handlers answer from.
type Metadata interface {
	ClusterID() string
	ControllerID() int32
	// Brokers lists every live broker (at its inter-broker address).
	Brokers() []BrokerInfo
	// BrokersOn lists the live brokers that have the listener, at their
	// address on it: what a client connected to that listener is told.
	BrokersOn(listener string) []BrokerInfo
	Topics() []TopicInfo
	Topic(name string) (TopicInfo, bool)
	TopicByID(id [16]byte) (TopicInfo, bool)
	// Deleting reports a topic whose deletion is under way (auto-creation
	// must not resurrect it).
	Deleting(name string) bool
	// Ready returns a channel closed once the broker may serve clients
	// (ready.go).
	Ready() <-chan struct{}
}

// CreateTopic is one topic of a CreateTopics request after defaults and
// validation of its shape.
type CreateTopic struct {
	Name              string
	NumPartitions     int32
	ReplicationFactor int16
	Assignment        map[int32][]int32 // manual assignment, nil for automatic
	Configs           map[string]string
}

// Admin performs topic administration. Errors are kerr errors (or wrap one).
type Admin interface {
	// CreateTopic creates a topic and waits until its leaders are known
	// (or ctx ends); only the controller serves it (NOT_CONTROLLER).
	CreateTopic(ctx context.Context, t CreateTopic, validateOnly bool) (TopicInfo, error)
	// AutoCreateTopic creates a topic on behalf of a Metadata request,
	// from any broker, without waiting.
	AutoCreateTopic(ctx context.Context, t CreateTopic) error
	// DeleteTopic queues a deletion and waits for it (or ctx's end).
	DeleteTopic(ctx context.Context, name string) error
	// TopicConfig reads a topic's overrides from the store, as Kafka's
	// DescribeConfigs reads them from ZooKeeper: what an AlterConfigs or a
	// CreateTopics just wrote, before the broker's watch has applied it.
	TopicConfig(ctx context.Context, name string) (map[string]string, error)
}

// Partitions finds partitions hosted on this broker.
type Partitions interface {
	Get(tp kafka.TopicPartition) *replica.Partition
}

// ProducerIDs issues producer ids (InitProducerId) and tells ids that
// were issued from made-up ones (InitProducerId, Produce):
// *producerid.Manager.
type ProducerIDs interface {
	// Next hands out a new producer id, waiting (within ctx) only when
	// the broker has no block of ids; an error means no id now.
	Next(ctx context.Context) (int64, error)
	// Issued reports whether some broker ever handed out id.
	Issued(id int64) bool
}

// TxnVerifier asks a producer's transaction coordinator whether a
// partition is in its ongoing transaction, before a transactional batch
// opens a transaction on it (KIP-890 part 1; Kafka's
// AddPartitionsToTxnManager with verify-only AddPartitionsToTxn v4+). It
// answers 0 or the error code the partition's Produce answer carries
// (INVALID_TXN_STATE when the partition was not added, or the
// coordinator's error). Implemented in internal/broker (txn.go).
type TxnVerifier interface {
	VerifyPartition(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, tp kafka.TopicPartition) int16
}

// Config is everything a Handler needs.
type Config struct {
	NodeID     int32
	Broker     *config.Broker
	Meta       Metadata
	Admin      Admin
	Control    Control
	Reassign   Reassignments // nil: KIP-455 requests answer NOT_CONTROLLER
	Elections  Elections     // nil: ElectLeaders answers NOT_CONTROLLER
	Partitions Partitions
	// ProducerIDs: nil answers InitProducerId COORDINATOR_NOT_AVAILABLE
	// and lets Produce accept any producer id; set, Produce refuses an
	// idempotent batch of an id never issued (UNKNOWN_PRODUCER_ID).
	ProducerIDs ProducerIDs
	// Groups is the group coordinator; nil answers the group APIs
	// COORDINATOR_NOT_AVAILABLE.
	Groups *group.Coordinator
	// LowerOffsetsReplication lets FindCoordinator create
	// __consumer_offsets with fewer replicas than
	// offsets.topic.replication.factor when fewer brokers are live (a
	// one-broker server on its own store, the factor not set).
	LowerOffsetsReplication bool
	// Txns is the transaction coordinator; nil answers the transaction
	// APIs COORDINATOR_NOT_AVAILABLE (InitProducerId with a
	// transactional id: UNSUPPORTED_VERSION).
	Txns *txn.Coordinator
	// TxnVerifier: nil appends transactional batches unverified.
	TxnVerifier TxnVerifier
	// LowerTxnStateReplication is LowerOffsetsReplication for
	// __transaction_state and transaction.state.log.replication.factor.
	LowerTxnStateReplication bool

	// issue 20: dynamic configs
	// Configs serves AlterConfigs and IncrementalAlterConfigs and gives
	// the configuration DescribeConfigs reports; nil: Broker, static.
	Configs Configs

	// issue 20: log dirs and DeleteRecords
	LogDirs LogDirs // nil: DescribeLogDirs answers no dirs

	// issue 20: client quotas

	// ClientQuotas stores quota entities; nil: DescribeClientQuotas
	// answers none and AlterClientQuotas fails each entry.
	ClientQuotas ClientQuotas
	// Quotas enforces the client quotas in force (quota.go); nil: none.
	Quotas *quota.Manager

	// issue 20: features

	// Stats counts the record bytes produced and fetched (Kafka's
	// BrokerTopicMetrics); nil: counted for nobody.
	Stats *kafka.BrokerTopicStats
	// Purgatory counts the requests waiting (delayed.go); nil: counted
	// for nobody.
	Purgatory *Purgatory

	Logger *slog.Logger
	Now    func() time.Time
}

// Handler serves every API key in wire.Supported.
type Handler struct {
	Config
	sessions *fetchSessions
}

// New returns a Handler; nil Logger and Now get defaults.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stats == nil {
		cfg.Stats = &kafka.BrokerTopicStats{}
	}
	if cfg.Purgatory == nil {
		cfg.Purgatory = &Purgatory{}
	}
	return &Handler{Config: cfg, sessions: newFetchSessions(1000, cfg.Now)}
}

var _ server.Handler = (*Handler)(nil)

// Handle dispatches one request by its type, once the broker is ready for
// it (ready.go), and enforces client quotas on it (quota.go).
func (h *Handler) Handle(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	if gated, bound := needsReady(req); gated {
		if err := h.awaitReady(ctx, req, bound); err != nil {
			return nil, err
		}
	}
	ctx, q := h.startQuota(ctx, hdr, req) // issue 20: client quotas
	resp, err := h.dispatch(ctx, c, hdr, req)
	h.endQuota(q, c, req, resp)
	return resp, err
}

func (h *Handler) dispatch(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		return h.produce(ctx, r)
	case *kmsg.FetchRequest:
		return h.fetch(ctx, r)
	case *kmsg.ListOffsetsRequest:
		return h.listOffsets(r), nil
	case *kmsg.MetadataRequest:
		return h.metadata(ctx, r, listenerOf(c)), nil
	case *kmsg.ApiVersionsRequest:
		return wire.ApiVersionsResponse(r.Version, 0), nil
	case *kmsg.CreateTopicsRequest:
		return h.createTopics(ctx, r), nil
	case *kmsg.DeleteTopicsRequest:
		return h.deleteTopics(ctx, r), nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return h.offsetForLeaderEpoch(r), nil
	case *kmsg.DescribeConfigsRequest:
		return h.describeConfigs(ctx, r), nil
	case *kmsg.DescribeClusterRequest:
		return h.describeCluster(r, listenerOf(c)), nil
	case *kmsg.DescribeACLsRequest:
		return describeACLs(r), nil
	case *kmsg.CreateACLsRequest:
		return createACLs(r), nil
	case *kmsg.DeleteACLsRequest:
		return deleteACLs(r), nil
	case *kmsg.DescribeUserSCRAMCredentialsRequest:
		return describeUserSCRAMCredentials(r), nil
	case *kmsg.LeaderAndISRRequest:
		return h.leaderAndIsr(ctx, r), nil
	case *kmsg.StopReplicaRequest:
		return h.stopReplica(ctx, r), nil
	case *kmsg.UpdateMetadataRequest:
		return h.updateMetadata(ctx, r), nil
	case *kmsg.AlterPartitionRequest:
		return h.alterPartition(ctx, r), nil
	case *kmsg.AlterPartitionAssignmentsRequest:
		return h.alterPartitionReassignments(ctx, r), nil
	case *kmsg.ListPartitionReassignmentsRequest:
		return h.listPartitionReassignments(ctx, r), nil
	case *kmsg.ElectLeadersRequest:
		return h.electLeaders(ctx, r), nil
	case *kmsg.ControlledShutdownRequest:
		return h.controlledShutdown(ctx, r), nil
	case *kmsg.CreatePartitionsRequest:
		return h.createPartitions(ctx, r), nil
	case *kmsg.InitProducerIDRequest:
		return h.initProducerID(ctx, r), nil
	case *kmsg.FindCoordinatorRequest:
		return h.findCoordinator(ctx, r, listenerOf(c)), nil
	case *kmsg.JoinGroupRequest:
		return h.joinGroup(ctx, c, hdr, r)
	case *kmsg.SyncGroupRequest:
		return h.syncGroup(ctx, r)
	case *kmsg.HeartbeatRequest:
		return h.heartbeat(r), nil
	case *kmsg.LeaveGroupRequest:
		return h.leaveGroup(r), nil
	case *kmsg.OffsetCommitRequest:
		return h.offsetCommit(ctx, r), nil
	case *kmsg.OffsetFetchRequest:
		return h.offsetFetch(r), nil
	case *kmsg.WriteTxnMarkersRequest:
		return h.writeTxnMarkers(ctx, r)
	case *kmsg.TxnOffsetCommitRequest:
		return h.txnOffsetCommit(ctx, r), nil
	case *kmsg.DescribeGroupsRequest:
		return h.describeGroups(r), nil
	case *kmsg.ListGroupsRequest:
		return h.listGroups(r), nil
	case *kmsg.DeleteGroupsRequest:
		return h.deleteGroups(ctx, r), nil
	case *kmsg.OffsetDeleteRequest:
		return h.offsetDelete(ctx, r), nil
	case *kmsg.DescribeProducersRequest:
		return h.describeProducers(r), nil
	case *kmsg.AddPartitionsToTxnRequest:
		return h.addPartitionsToTxn(ctx, r), nil
	case *kmsg.AddOffsetsToTxnRequest:
		return h.addOffsetsToTxn(ctx, r), nil
	case *kmsg.EndTxnRequest:
		return h.endTxn(ctx, r), nil
	case *kmsg.DescribeTransactionsRequest:
		return h.describeTransactions(r), nil
	case *kmsg.ListTransactionsRequest:
		return h.listTransactions(r), nil

		// issue 20: dynamic configs
	case *kmsg.AlterConfigsRequest:
		return h.alterConfigs(ctx, r), nil
	case *kmsg.IncrementalAlterConfigsRequest:
		return h.incrementalAlterConfigs(ctx, r), nil

		// issue 20: log dirs and DeleteRecords
	case *kmsg.DeleteRecordsRequest:
		return h.deleteRecords(ctx, r)
	case *kmsg.AlterReplicaLogDirsRequest:
		return h.alterReplicaLogDirs(r), nil
	case *kmsg.DescribeLogDirsRequest:
		return h.describeLogDirs(r), nil

		// issue 20: client quotas
	case *kmsg.DescribeClientQuotasRequest:
		return h.describeClientQuotas(ctx, r), nil
	case *kmsg.AlterClientQuotasRequest:
		return h.alterClientQuotas(ctx, r), nil

		// issue 20: features
	case *kmsg.UpdateFeaturesRequest:
		return h.updateFeatures(r), nil
	}
	return nil, fmt.Errorf("api: no handler for key %d", req.Key())
}

// listenerOf is the listener a connection came in on ("" without one: the
// handler tests call Handle without a connection).
func listenerOf(c *server.Conn) string {
	if c == nil {
		return ""
	}
	return c.Listener
}

package broker

// The broker side of the control plane: what a broker does with the
// controller's LeaderAndIsr, StopReplica and UpdateMetadata (Kafka's
// ReplicaManager.becomeLeaderOrFollower / stopReplicas and
// MetadataCache.updateMetadata, ZooKeeper era).
//
// Every request first passes metacache.CheckEpochs: a stale broker epoch
// answers STALE_BROKER_EPOCH, a controller epoch below the highest seen
// STALE_CONTROLLER_EPOCH, and nothing is applied (every partition of the
// request carries the same error, as Kafka's getErrorResponse does).
//
// LeaderAndIsr, per partition:
//   - this broker not in Replicas:           UNKNOWN_TOPIC_OR_PARTITION, ignored
//   - topic id differs from the hosted partition's: INCONSISTENT_TOPIC_ID
//     (a log on disk, not hosted, of another topic id is set aside as
//     stray, and the partition gets a new log: stray.go)
//   - leader epoch not newer than ours:      STALE_CONTROLLER_EPOCH, ignored
//   - otherwise the log is created if absent (topic config from the store)
//     and the role recorded: leader when Leader is this broker, else follower
//   - log creation failure:                  KAFKA_STORAGE_ERROR
//
// Partitions becoming leader leave the follower fetchers before their role
// changes; partitions following a leader are (re)targeted at it afterwards
// (the fetcher truncates a divergent suffix first), and those with no leader
// stop fetching. StopReplica takes partitions out of the fetchers too.
//
// StopReplica, per partition: a leader epoch of -2 (deletion) or -1 (none)
// always applies, otherwise it must be at least ours (else
// FENCED_LEADER_EPOCH); the partition stops being hosted and, with delete,
// its directory is renamed <topic>-<p>.<uuid>-delete. A partition not hosted
// is still deleted from disk (a topic deleted while this broker was down).
//
// Requests are applied one at a time (Kafka's replicaStateChangeLock).

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/fetcher"
	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
	"github.com/samsa-kafka/samsa/internal/txn"
)

// noEpoch is the StopReplica leader epoch that, like
// kafka.EpochDuringDelete, bypasses the epoch check (Kafka's
// LeaderAndIsr.NoEpoch).
const noEpoch = -1

var _ api.Control = (*controlPlane)(nil)

// controlPlane implements api.Control on a broker.
type controlPlane struct {
	cache           *metacache.Cache
	replicas        *replica.Manager
	logs            *storage.Manager // for stray logs (stray.go)
	fetchers        *fetcher.Manager // nil in tests without replication
	alterPartition  func(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse
	topicConfig     func(ctx context.Context, topic string) (map[string]string, error)
	partitionConfig func(overrides map[string]string) (replica.Config, error)
	nodeID          int32
	log             *slog.Logger
	stats           *kafka.BrokerTopicStats // a deleted topic's counters go with its last partition here; nil in some tests
	groups          *group.Coordinator      // told of __consumer_offsets leaderships; nil in some tests
	txns            *txn.Coordinator        // told of __transaction_state leaderships; nil in some tests

	// controlledShutdown: this broker's controller serves ControlledShutdown (shutdown.go).
	controlledShutdown func(ctx context.Context, req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse

	mu sync.Mutex // one control request at a time
	// configMu (dynconfig.go) is held from resolving partitions' configs
	// to hosting them, so that no broker config change falls between;
	// nil in tests.
	configMu *sync.Mutex
}

// LeaderAndIsr makes this broker leader or follower of each partition:
// the epochs are checked, the request's partitions looked up once
// (lisrParts), the logs of new ones created in one batch, the fetchers of
// partitions about to be led stopped; then each partition takes its role
// (applyLisr) and the fetchers follow the new leaders.
func (c *controlPlane) LeaderAndIsr(ctx context.Context, req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.configMu != nil {
		c.configMu.Lock()
		defer c.configMu.Unlock()
	}
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	resp.ErrorCode = c.refused("LeaderAndIsr", req.ControllerID, req.ControllerEpoch, req.BrokerEpoch,
		c.cache.CheckEpochs(req.ControllerID, req.ControllerEpoch, req.BrokerEpoch))
	parts := c.lisrParts(req.TopicStates)
	cfgs := &topicCfgs{}
	if resp.ErrorCode == 0 {
		c.createLogs(ctx, parts, cfgs)
		// Partitions this broker is about to lead stop fetching first
		// (Kafka's makeLeaders removes their fetchers before the role).
		c.removeFetchers(c.newLeaders(parts))
	}
	out := c.applyLisr(ctx, req, resp, parts, cfgs)
	c.removeFetchers(out.unfollow)
	if c.fetchers != nil && len(out.follow) > 0 {
		c.fetchers.AddPartitions(out.follow)
	}
	if resp.ErrorCode == 0 {
		// Partitions whose leader epoch was not newer are counted here and
		// logged one by one only at debug (Kafka writes an "Ignoring
		// LeaderAndIsr request" line for each): a new controller sends
		// every partition again, 100k lines a broker on each failover.
		c.log.Info("applied LeaderAndIsr", "controller", req.ControllerID, "controller_epoch", req.ControllerEpoch,
			"leaders", out.leaders, "followers", out.followers, "ignored_stale_epoch", out.stale)
	}
	return resp
}

// lisrOutcome is what applying a LeaderAndIsr's partitions came to: counts
// for the log line, and the partitions the fetchers are to follow or stop
// following.
type lisrOutcome struct {
	leaders, followers, stale int
	follow                    []fetcher.Target
	unfollow                  []kafka.TopicPartition
}

// applyLisr gives each partition of the request its role, within one
// replica batch (none when the request was refused: every partition gets
// resp.ErrorCode), and answers it in resp, topic by topic.
func (c *controlPlane) applyLisr(ctx context.Context, req *kmsg.LeaderAndISRRequest, resp *kmsg.LeaderAndISRResponse, parts []lisrPart, cfgs *topicCfgs) *lisrOutcome {
	out := &lisrOutcome{follow: make([]fetcher.Target, 0, followTargets(parts, c.nodeID))} // thousands: no regrowth
	resp.Topics = make([]kmsg.LeaderAndISRResponseTopic, 0, len(req.TopicStates))
	batch := c.replicas.NewBatch()
	next := 0
	for _, ts := range req.TopicStates {
		topicParts := parts[next : next+len(ts.PartitionStates)]
		next += len(ts.PartitionStates)
		batch.StartTopic(c.newlyHosted(topicParts))
		rt := kmsg.NewLeaderAndISRResponseTopic()
		rt.TopicID = ts.TopicID
		rt.Partitions = make([]kmsg.LeaderAndISRResponseTopicPartition, 0, len(topicParts))
		for i := range topicParts {
			lp := &topicParts[i]
			code := resp.ErrorCode
			var p *replica.Partition
			if code == 0 {
				code, p = c.become(ctx, batch, lp, cfgs, req.ControllerEpoch)
			}
			out.add(lp, code, p, c.nodeID)
			if code == 0 && ts.Topic == api.OffsetsTopic {
				c.coordinatorChange(lp.ps)
			}
			if code == 0 && ts.Topic == api.TxnStateTopic {
				c.txnCoordinatorChange(lp.ps)
			}
			rp := kmsg.NewLeaderAndISRResponseTopicPartition()
			rp.Topic, rp.Partition, rp.ErrorCode = ts.Topic, lp.ps.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return out
}

// add counts one partition applied with code (p: the partition, on
// success) and notes what its fetcher is to do.
func (o *lisrOutcome) add(lp *lisrPart, code int16, p *replica.Partition, self int32) {
	ps := lp.ps
	switch {
	case code == kerr.StaleControllerEpoch.Code:
		o.stale++
	case code != 0:
	case ps.Leader == self:
		o.leaders++
	case ps.Leader < 0: // no leader (offline, or being deleted): nothing to fetch from
		o.followers++
		o.unfollow = append(o.unfollow, lp.tp())
	default:
		o.followers++
		o.follow = append(o.follow, fetcher.Target{TP: lp.tp(), TopicID: lp.id(), Leader: ps.Leader,
			LeaderEpoch: ps.LeaderEpoch, Partition: p})
	}
}

// coordinatorChange tells the group coordinator that this broker leads,
// or no longer leads, a __consumer_offsets partition (Kafka's
// onLeadershipChange: onElection / onResignation).
func (c *controlPlane) coordinatorChange(ps *kmsg.LeaderAndISRRequestTopicPartition) {
	if c.groups == nil {
		return
	}
	if ps.Leader == c.nodeID {
		c.groups.BecomeLeader(ps.Partition, ps.LeaderEpoch)
	} else {
		c.groups.Resign(ps.Partition)
	}
}

// txnCoordinatorChange is coordinatorChange for the transaction
// coordinator and __transaction_state.
func (c *controlPlane) txnCoordinatorChange(ps *kmsg.LeaderAndISRRequestTopicPartition) {
	if c.txns == nil {
		return
	}
	if ps.Leader == c.nodeID {
		c.txns.BecomeLeader(ps.Partition, ps.LeaderEpoch)
	} else {
		c.txns.Resign(ps.Partition)
	}
}

// newlyHosted counts the partitions of parts this broker is to host for the
// first time, and the leaders among them.
func (c *controlPlane) newlyHosted(parts []lisrPart) (n, leaders int) {
	for i := range parts {
		if lp := &parts[i]; lp.mine && lp.hosted == nil {
			n++
			if lp.ps.Leader == c.nodeID {
				leaders++
			}
		}
	}
	return n, leaders
}

// followTargets bounds the partitions of parts that may be handed to a
// fetcher: those of this broker led by another one.
func followTargets(parts []lisrPart, self int32) int {
	n := 0
	for i := range parts {
		if l := parts[i].ps.Leader; parts[i].mine && l >= 0 && l != self {
			n++
		}
	}
	return n
}

func (c *controlPlane) removeFetchers(tps []kafka.TopicPartition) {
	if c.fetchers != nil && len(tps) > 0 {
		c.fetchers.RemovePartitions(tps)
	}
}

// topicCfg is a topic's resolved partition configuration, looked up once per
// request.
type topicCfg struct {
	cfg replica.Config
	err error
}

// topicCfgs are the topic configurations resolved for one request; the
// last one is at hand without hashing its topic's name (a request lists
// partitions topic by topic). Evidence: added with the O(changed)
// LeaderAndIsr (commit ea14e28), whose figure covers it with the rest:
// BenchmarkLeaderAndIsrApply 306-330 ms / 570k allocs -> 185-272 ms / 136k.
type topicCfgs struct {
	byTopic map[string]*topicCfg
	last    string
	lastCfg *topicCfg
}

func (t *topicCfgs) get(ctx context.Context, c *controlPlane, topic string) *topicCfg {
	if t.lastCfg != nil && t.last == topic {
		return t.lastCfg
	}
	tc := t.byTopic[topic]
	if tc == nil {
		r := c.resolveConfig(ctx, topic)
		tc = &r
		if t.byTopic == nil {
			t.byTopic = map[string]*topicCfg{}
		}
		t.byTopic[topic] = tc
	}
	t.last, t.lastCfg = topic, tc
	return tc
}

// become applies one partition state within the request's batch and
// returns its error code and, on success, the partition. It allocates
// nothing on the common paths (a new partition comes from the batch's
// slabs): the logger with the partition's attributes is built only when
// something is logged.
func (c *controlPlane) become(ctx context.Context, b *replica.Batch, lp *lisrPart, cfgs *topicCfgs, ctrlEpoch int32) (int16, *replica.Partition) {
	ps, tp := lp.ps, lp.tp()
	log := func() *slog.Logger {
		return c.log.With("partition", tp.String(), "controller_epoch", ctrlEpoch, "leader_epoch", ps.LeaderEpoch)
	}
	if !lp.mine {
		log().Warn("ignoring LeaderAndIsr: this broker is not in the replicas", "replicas", ps.Replicas)
		return kerr.UnknownTopicOrPartition.Code, nil
	}
	var cfg replica.Config
	if lp.hosted == nil { // a hosted partition keeps its config
		tc := cfgs.get(ctx, c, tp.Topic)
		if tc.err != nil {
			log().Error("cannot resolve topic config", "err", tc.err)
			return kerr.UnknownServerError.Code, nil
		}
		cfg = tc.cfg
	}
	role := replica.Follower
	if ps.Leader == c.nodeID {
		role = replica.Leader
	}
	st := replica.State{Role: role, Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch, PartitionEpoch: ps.ZKVersion,
		Replicas: ps.Replicas, ISR: ps.ISR}
	var p *replica.Partition
	var err error
	if lp.hosted != nil {
		p, err = b.BecomeHosted(lp.hosted, lp.id(), st)
	} else {
		p, err = b.BecomeWithLog(tp, lp.id(), cfg, st, lp.log)
	}
	switch {
	case err == nil:
		if c.log.Enabled(ctx, slog.LevelDebug) {
			log().Debug("became "+role.String(), "leader", ps.Leader, "isr", ps.ISR)
		}
		return 0, p
	case errors.Is(err, replica.ErrStaleLeaderEpoch):
		if c.log.Enabled(ctx, slog.LevelDebug) {
			log().Debug("ignoring LeaderAndIsr: leader epoch is not newer")
		}
		return kerr.StaleControllerEpoch.Code, nil
	case errors.Is(err, replica.ErrInconsistentTopicID):
		log().Error("ignoring LeaderAndIsr", "err", err)
		return kerr.InconsistentTopicID.Code, nil
	default:
		log().Error("cannot host partition", "err", err)
		return kerr.KafkaStorageError.Code, nil
	}
}

func (c *controlPlane) resolveConfig(ctx context.Context, topic string) topicCfg {
	overrides, err := c.topicConfig(ctx, topic)
	if err != nil {
		return topicCfg{err: err}
	}
	cfg, err := c.partitionConfig(overrides)
	return topicCfg{cfg: cfg, err: err}
}

// StopReplica stops hosting partitions, deleting their logs when asked.
func (c *controlPlane) StopReplica(_ context.Context, req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	resp.ErrorCode = c.refused("StopReplica", req.ControllerID, req.ControllerEpoch, req.BrokerEpoch,
		c.cache.CheckEpochs(req.ControllerID, req.ControllerEpoch, req.BrokerEpoch))
	// Fencing is checked per partition; the partitions that pass are
	// stopped in two batches (delete or not), so that the logs of a whole
	// deletion are renamed with one directory fsync.
	batches := map[bool][]kafka.TopicPartition{}
	index := map[kafka.TopicPartition]int{}
	for _, t := range req.Topics {
		for _, ps := range t.PartitionStates {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: ps.Partition}
			code := resp.ErrorCode
			if code == 0 {
				code = c.checkStop(tp, ps.LeaderEpoch, req.ControllerEpoch)
			}
			if code == 0 {
				batches[ps.Delete] = append(batches[ps.Delete], tp)
			}
			rp := kmsg.NewStopReplicaResponsePartition()
			rp.Topic, rp.Partition, rp.ErrorCode = t.Topic, ps.Partition, code
			index[tp] = len(resp.Partitions)
			resp.Partitions = append(resp.Partitions, rp)
		}
	}
	for del, tps := range batches {
		c.removeFetchers(tps)
		for _, tp := range tps {
			if tp.Topic == api.OffsetsTopic && c.groups != nil {
				c.groups.Resign(tp.Partition)
			}
			if tp.Topic == api.TxnStateTopic && c.txns != nil {
				c.txns.Resign(tp.Partition)
			}
		}
		if err := c.replicas.RemoveMany(tps, del); err != nil {
			c.log.Error("stopping replicas failed", "partitions", len(tps), "delete", del, "err", err)
			for _, tp := range tps {
				resp.Partitions[index[tp]].ErrorCode = kerr.KafkaStorageError.Code
			}
		}
		if del {
			c.forgetTopicStats(tps)
		}
	}
	return resp
}

// forgetTopicStats drops the per-topic counters of the topics of deleted
// partitions that this broker hosts no partition of any more (Kafka's
// maybeRemoveTopicMetrics).
func (c *controlPlane) forgetTopicStats(deleted []kafka.TopicPartition) {
	if c.stats == nil {
		return
	}
	for i, tp := range deleted {
		if (i == 0 || deleted[i-1].Topic != tp.Topic) && !c.replicas.HostsTopic(tp.Topic) {
			c.stats.RemoveTopic(tp.Topic)
		}
	}
}

// checkStop fences a StopReplica for one partition by leader epoch (-2,
// deletion, and -1, unknown, always pass).
func (c *controlPlane) checkStop(tp kafka.TopicPartition, epoch int32, ctrlEpoch int32) int16 {
	if p := c.replicas.Get(tp); p != nil && epoch != kafka.EpochDuringDelete && epoch != noEpoch && epoch < p.LeaderEpoch() {
		c.log.Warn("ignoring StopReplica: leader epoch is older than ours", "partition", tp.String(),
			"controller_epoch", ctrlEpoch, "leader_epoch", epoch, "ours", p.LeaderEpoch())
		return kerr.FencedLeaderEpoch.Code
	}
	return 0
}

// UpdateMetadata feeds the metadata cache; a full snapshot also sets the
// stray logs aside (stray.go).
func (c *controlPlane) UpdateMetadata(_ context.Context, req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	resp.ErrorCode = c.refused("UpdateMetadata", req.ControllerID, req.ControllerEpoch, req.BrokerEpoch,
		c.cache.ApplyUpdateMetadata(req))
	if resp.ErrorCode == 0 && c.groups != nil {
		if deleted := deletedPartitions(req); len(deleted) > 0 {
			c.groups.PartitionsDeleted(deleted)
		}
	}
	if resp.ErrorCode == 0 && kafka.IsFullUpdateMetadata(req) {
		c.setAsideStrays(req)
	}
	return resp
}

// deletedPartitions are the partitions an UpdateMetadata marks deleted
// (leader -2): their committed offsets go (Kafka's
// GroupCoordinator.onPartitionsDeleted, from handleUpdateMetadataRequest).
func deletedPartitions(req *kmsg.UpdateMetadataRequest) []group.TP {
	var out []group.TP
	for _, t := range req.TopicStates {
		for _, ps := range t.PartitionStates {
			if ps.Leader == kafka.LeaderDuringDelete {
				out = append(out, group.TP{Topic: t.Topic, Partition: ps.Partition})
			}
		}
	}
	return out
}

// refused logs a controller request refused for its epochs (code != 0) and
// returns code.
func (c *controlPlane) refused(api string, controllerID, controllerEpoch int32, brokerEpoch int64, code int16) int16 {
	if code != 0 {
		c.log.Warn("ignoring "+api, "controller", controllerID, "controller_epoch", controllerEpoch,
			"broker_epoch", brokerEpoch, "err", kerr.ErrorForCode(code))
	}
	return code
}

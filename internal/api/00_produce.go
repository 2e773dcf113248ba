package api

// Produce (key 0), v3–v11: record batch v2 only.
//
// acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS on every partition).
// Each partition's payload must be exactly one v2 batch: its frame is
// checked by record.ReadProduced (one whole batch, max.message.bytes,
// CRC32C), its header by the rules below, then its records by
// record.CheckProduced in one pass (Kafka's LogValidator: framing, a
// compacted topic's keys, the topic's timestamp rules, re-encoding for
// compression.type), before the leader appends it
// (NOT_LEADER_OR_FOLLOWER on a follower). acks=0 gets no response
// at all; acks=1 is answered once the leader has written. acks=-1 is refused
// when the ISR is smaller than min.insync.replicas (NOT_ENOUGH_REPLICAS,
// nothing written); otherwise the request waits for the ISR to replicate
// what it appended (the delayed produce of produce_acks.go). That wait
// runs after the handler returns (server.Later): the connection's next
// produce requests are appended meanwhile, in order, and answered in
// order, so a producer's pipelined requests (max.in.flight.requests.per.
// connection) overlap their replication waits instead of queueing behind
// them, as they do on Kafka's broker. A request of 1 MiB or more over
// several partitions has them checked and appended on up to GOMAXPROCS
// goroutines, each answered in its place (appendAll).
//
// On a compacted topic (cleanup.policy holds compact) a record without a
// key is INVALID_RECORD for its partition, nothing appended (Kafka's
// LogValidator); a batch larger than segment.bytes is
// RECORD_LIST_TOO_LARGE.
//
// Idempotent batches (producer id >= 0, KIP-98) are checked by the log
// under its append lock (storage/producerstate.go): a retry of one of the
// producer's last 5 batches is answered with the original's base offset
// and appends nothing (acks=-1 then waits for the high watermark to cover
// the original), a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an older
// epoch INVALID_PRODUCER_EPOCH, a batch no client sends (negative epoch or
// sequence, records not matching the sequence range) INVALID_RECORD, and a
// producer id the cluster never issued UNKNOWN_PRODUCER_ID (Config.
// ProducerIDs). Each only for its partition: the others and the
// connection go on.
//
// Transactions (KIP-98): a control batch from a client is INVALID_RECORD;
// a transactional batch must come from an idempotent producer
// (INVALID_RECORD) of a request naming its transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers a null id).
// KIP-890 part 1: a transactional batch of a producer with no transaction
// open on the partition is appended only if Config.TxnVerifier says the
// coordinator added the partition (else its code, e.g. INVALID_TXN_STATE),
// and only if no marker of the producer was appended meanwhile (Kafka's
// verification guard: INVALID_TXN_STATE).
//
// Clients may not write to internal topics (__consumer_offsets,
// __transaction_state):
// INVALID_TOPIC_EXCEPTION, as Kafka's ReplicaManager.appendToLocalLog.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/storage"
)

func (h *Handler) produce(ctx context.Context, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	badAcks := req.Acks != -1 && req.Acks != 0 && req.Acks != 1
	now := h.Now()
	var jobs []produceJob
	size := 0
	// Sized up front: the jobs, and pending, point into the response.
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			if badAcks {
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
				continue
			}
			jobs = append(jobs, produceJob{tp: kafka.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}, rp: rp, sp: sp})
			size += len(rp.Records)
		}
	}
	h.appendAll(ctx, req, jobs, size, now)
	var pending []pendingAck // acks=-1 only
	for _, j := range jobs {
		if j.p != nil && req.Acks == -1 {
			pending = append(pending, pendingAck{tp: j.tp, p: j.p, required: j.required, sp: j.sp})
		}
	}
	if req.Acks == 0 {
		return nil, nil
	}
	if pending = h.checkAcks(pending); len(pending) == 0 {
		return resp, nil
	}
	// The wait for the acks goes on after this returns: the connection
	// handles the next produce requests meanwhile (server.Later).
	timeout := req.TimeoutMillis
	finish := func() bool { return h.awaitAcks(ctx, pending, timeout) }
	if !server.Later(ctx, finish) && !finish() {
		return nil, nil // the connection is closing: nothing to answer
	}
	return resp, nil
}

// produceJob is one partition of a Produce request: its batch, its answer
// and, once appended, the partition and the offset acks=-1 waits for.
type produceJob struct {
	tp       kafka.TopicPartition
	rp       *kmsg.ProduceRequestTopicPartition
	sp       *kmsg.ProduceResponseTopicPartition
	p        *replica.Partition
	required int64
}

// parallelAppendBytes is the size of a request's batches from which its
// partitions are checked and appended on several goroutines (appendAll).
const parallelAppendBytes = 1 << 20

// appendAll checks and appends each job's batch, in order on this
// goroutine, or, for a request of several partitions, each named once, and
// parallelAppendBytes or more, on up to GOMAXPROCS goroutines (this one
// among them), each taking the next job: partitions are independent, and a
// large request's appends (each a check of its records and a write into
// the page cache) then use the cores the connection's one goroutine
// leaves idle. On this 2-core machine, 16 partitions a request, samsa-bench
// produced 13% more a second (issue 22). Each job writes only its own
// answer; the response keeps the request's order.
func (h *Handler) appendAll(ctx context.Context, req *kmsg.ProduceRequest, jobs []produceJob, size int, now time.Time) {
	if workers := min(len(jobs), runtime.GOMAXPROCS(0)); workers >= 2 && size >= parallelAppendBytes && !repeatsPartition(jobs) {
		h.appendParallel(ctx, req, jobs, now, workers)
		return
	}
	var ts *kafka.TopicStats // looked up once for a topic's run of partitions
	for i := range jobs {
		if i > 0 && jobs[i].tp.Topic != jobs[i-1].tp.Topic {
			ts = nil
		}
		h.appendJob(ctx, req, &jobs[i], now, &ts)
	}
}

// appendParallel runs the jobs on workers goroutines, this one among them.
func (h *Handler) appendParallel(ctx context.Context, req *kmsg.ProduceRequest, jobs []produceJob, now time.Time, workers int) {
	var next atomic.Int64
	work := func() {
		for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
			var ts *kafka.TopicStats
			h.appendJob(ctx, req, &jobs[i], now, &ts)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// appendJob checks and appends one job's batch (produceOne), *ts being
// the counters of its topic if already looked up.
func (h *Handler) appendJob(ctx context.Context, req *kmsg.ProduceRequest, j *produceJob, now time.Time, ts **kafka.TopicStats) {
	j.p, j.required = h.produceOne(ctx, req.TransactionID, j.tp, j.rp, j.sp, now, req.Acks, ts)
}

// repeatsPartition reports whether a partition has more than one job: its
// batches are then appended in request order (an idempotent producer's
// sequence numbers follow it), so the request's jobs one after the other.
func repeatsPartition(jobs []produceJob) bool {
	seen := make(map[kafka.TopicPartition]struct{}, len(jobs))
	for _, j := range jobs {
		if _, ok := seen[j.tp]; ok {
			return true
		}
		seen[j.tp] = struct{}{}
	}
	return false
}

// produceOne appends one partition's batch. On success it returns the
// partition and the offset the high watermark must reach for acks=-1. A
// partition hosted here is counted in its topic's counters, *ts, which it
// looks up when the request's partitions of the topic have not yet.
func (h *Handler) produceOne(ctx context.Context, txnID *string, tp kafka.TopicPartition, rp *kmsg.ProduceRequestTopicPartition, sp *kmsg.ProduceResponseTopicPartition, now time.Time, acks int16, ts **kafka.TopicStats) (*replica.Partition, int64) {
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
	if tp.Topic == OffsetsTopic || tp.Topic == TxnStateTopic {
		sp.ErrorCode = kerr.InvalidTopicException.Code
		return nil, 0
	}
	p := h.Partitions.Get(tp)
	if p == nil {
		sp.ErrorCode = h.missingPartitionCode(tp.Topic, tp.Partition)
		return nil, 0
	}
	if *ts == nil {
		*ts = h.Stats.Topic(tp.Topic)
	}
	defer func() { h.Stats.CountProduce(*ts, failedProduce(sp.ErrorCode)) }()
	cfg := p.Config()
	hdr, err := record.ReadProduced(rp.Records, cfg.MaxMessageBytes)
	switch {
	case err != nil:
	case hdr.Control():
		err = fmt.Errorf("%w: clients may not produce control batches", record.ErrInvalidRecord)
	case hdr.Transactional() && hdr.ProducerID < 0:
		err = fmt.Errorf("%w: transactional batch without a producer id", record.ErrInvalidRecord)
	case hdr.Transactional() && txnID == nil:
		err = fmt.Errorf("api: transactional batch in a produce request without a transactional id: %w", kerr.TransactionalIDAuthorizationFailed)
	case hdr.ProducerID >= 0 && h.ProducerIDs != nil && !h.ProducerIDs.Issued(hdr.ProducerID):
		err = errNeverIssued(hdr.ProducerID)
	}
	records := rp.Records
	if err == nil {
		var refused []record.RecordError
		records, hdr, refused, err = record.CheckProduced(records, hdr, record.ProduceRules{
			CreateTime: !cfg.Log.LogAppendTime, NowMs: now.UnixMilli(), Bounds: cfg.Log.Timestamps,
			Keys: cfg.Log.Compact, Codec: cfg.Log.Compression, MaxBatchBytes: cfg.MaxMessageBytes,
		})
		if len(refused) > 0 {
			refuseTimestamps(sp, refused)
			return nil, 0
		}
		if errors.Is(err, record.ErrNoKey) {
			err = fmt.Errorf("%w: Compacted topic cannot accept message without key in topic partition %s.", kerr.InvalidRecord, tp)
		}
	}
	guard, verified := uint64(0), false
	if err == nil && hdr.Transactional() {
		guard, verified, err = h.verifyTxn(ctx, *txnID, &hdr, tp, p)
	}
	if err != nil {
		h.Logger.Debug("produce rejected", "topic", tp.Topic, "partition", tp.Partition, "err", err)
		sp.ErrorCode, sp.ErrorMessage = errorCode(err), errorMessage(err)
		return nil, 0
	}
	var info storage.AppendInfo
	if verified {
		info, err = p.AppendVerified(records, []record.Header{hdr}, now, acks, guard)
	} else {
		info, err = p.AppendAsLeader(records, []record.Header{hdr}, now, acks)
	}
	if err != nil {
		sp.ErrorCode, sp.ErrorMessage = errorCode(err), errorMessage(err)
		if sp.ErrorCode == kerr.UnknownServerError.Code {
			h.Logger.Warn("append failed", "topic", tp.Topic, "partition", tp.Partition, "err", err)
		} else {
			h.Logger.Debug("append refused", "topic", tp.Topic, "partition", tp.Partition, "err", err)
		}
		return nil, 0
	}
	if !info.Duplicate { // a retry appended nothing
		h.Stats.CountIn(*ts, len(records), int(hdr.NumRecords))
	}
	sp.BaseOffset = info.FirstOffset
	sp.LogAppendTime = info.LogAppendTime
	sp.LogStartOffset = info.LogStartOffset
	return p, info.LastOffset + 1
}

// refuseTimestamps answers a partition whose batch holds records of
// timestamps the topic refuses as Kafka does: INVALID_TIMESTAMP, its
// message, and a record error (KIP-467) for each of them.
func refuseTimestamps(sp *kmsg.ProduceResponseTopicPartition, refused []record.RecordError) {
	sp.ErrorCode = kerr.InvalidTimestamp.Code
	msg := "One or more records have been rejected due to invalid timestamp"
	sp.ErrorMessage = &msg
	for _, r := range refused {
		e := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		e.RelativeOffset, e.ErrorMessage = r.Index, &r.Message
		sp.ErrorRecords = append(sp.ErrorRecords, e)
	}
}

// verifyTxn is KIP-890 part 1 for a transactional batch h: unless the
// producer has a transaction open on the partition, its coordinator must
// say the partition is in its transaction; verified tells the batch must
// then be appended with guard, which a marker in between invalidates.
func (h *Handler) verifyTxn(ctx context.Context, txnID string, hd *record.Header, tp kafka.TopicPartition, p *replica.Partition) (guard uint64, verified bool, err error) {
	if h.TxnVerifier == nil {
		return 0, false, nil
	}
	if guard = p.StartTxnVerification(hd.ProducerID); guard == 0 {
		return 0, false, nil // its transaction is open here
	}
	if code := h.TxnVerifier.VerifyPartition(ctx, txnID, hd.ProducerID, hd.ProducerEpoch, tp); code != 0 {
		return 0, false, fmt.Errorf("api: transaction %q of producer %d not verified for %s: %w", txnID, hd.ProducerID, tp, kerr.ErrorForCode(code))
	}
	return guard, true, nil
}

// errNeverIssued refuses a batch of a producer id the cluster never issued
// with UNKNOWN_PRODUCER_ID, Kafka's "no metadata for this producer id":
// clients (the Java client since KIP-360, franz-go) answer it by getting a
// producer id again with InitProducerId. INVALID_PRODUCER_ID_MAPPING would
// name a transactional id's mapping, which an idempotent producer has not.
func errNeverIssued(id int64) error {
	return fmt.Errorf("api: producer id %d was never issued: %w", id, kerr.UnknownProducerID)
}

// missingPartitionCode is the error for a partition not hosted here: the
// topic or partition does not exist, or another broker leads it.
func (h *Handler) missingPartitionCode(topic string, partition int32) int16 {
	if t, ok := h.Meta.Topic(topic); ok && partition >= 0 && int(partition) < len(t.Partitions) {
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.UnknownTopicOrPartition.Code
}

// failedProduce is whether Kafka counts a partition's produce error in
// FailedProduceRequestsPerSec: every error but those of a client that must
// look elsewhere or send less (Kafka's ReplicaManager.appendToLocalLog
// returns those without counting them).
func failedProduce(code int16) bool {
	switch code {
	case 0, kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.MessageTooLarge.Code,
		kerr.RecordListTooLarge.Code, kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code:
		return false
	}
	return true
}

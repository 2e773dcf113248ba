package txn

// Channel writes transaction markers (Kafka's
// TransactionMarkerChannelManager): a job's partitions are grouped by
// their leader (from the metadata cache), one WriteTxnMarkers (27) goes to
// each leader — this broker included, by the same path — and each
// partition's answer decides (markerOutcome):
//
//	NONE                                             written
//	UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
//	  NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT,
//	  KAFKA_STORAGE_ERROR, COORDINATOR_LOAD_IN_PROGRESS,
//	  any unexpected code, a failed request            retry (after the metadata moves)
//	INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED
//	                                                 stop: a newer producer or coordinator owns it
//	UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION
//	                                                 dropped (the producer could not have written there)
//
// A partition the metadata cache no longer knows is dropped (its topic was
// deleted, as Kafka skips a partition without a leader endpoint); one with
// no leader now waits. Retries come after Backoff.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// ErrMarkerFenced is a job stopped because a partition answered that a
// newer producer epoch or coordinator owns the transaction.
var ErrMarkerFenced = errors.New("txn: transaction markers fenced")

// Sender sends one WriteTxnMarkers request to a broker.
type Sender interface {
	SendMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
}

// ChannelConfig is what a Channel needs.
type ChannelConfig struct {
	Sender Sender
	// Leader is the partition's leader; ok false when the partition is
	// not known (deleted), leader -1 when it has none now.
	Leader  func(tp kafka.TopicPartition) (leader int32, ok bool)
	Backoff time.Duration // between rounds; 0: 100ms
	Logger  *slog.Logger
}

// Channel is Markers over WriteTxnMarkers requests.
type Channel struct{ cfg ChannelConfig }

// NewChannel returns a Channel.
func NewChannel(cfg ChannelConfig) *Channel {
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Channel{cfg: cfg}
}

type outcome int

const (
	retry outcome = iota
	written
	fenced
	dropped
)

// markerOutcome is the table above, for one partition's answer.
func markerOutcome(code int16) outcome {
	switch kerr.ErrorForCode(code) {
	case nil:
		return written
	case kerr.InvalidProducerEpoch, kerr.TransactionCoordinatorFenced:
		return fenced
	case kerr.UnsupportedForMessageFormat, kerr.UnsupportedVersion:
		return dropped
	}
	return retry
}

// Write writes the job's markers; see Markers.
func (ch *Channel) Write(ctx context.Context, job MarkerJob, written func(kafka.TopicPartition)) error {
	left := map[kafka.TopicPartition]bool{}
	for _, tp := range job.Partitions {
		left[tp] = true
	}
	for round := 0; ; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(ch.cfg.Backoff):
			}
		}
		if err := ch.round(ctx, job, left, written); err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// round sends one request per leader for the partitions left and applies
// the answers.
func (ch *Channel) round(ctx context.Context, job MarkerJob, left map[kafka.TopicPartition]bool, done func(kafka.TopicPartition)) error {
	byLeader := map[int32][]kafka.TopicPartition{}
	for _, tp := range sortTPs(keys(left)) {
		leader, ok := ch.cfg.Leader(tp)
		switch {
		case !ok:
			ch.cfg.Logger.Info("dropping a transaction marker: the partition no longer exists",
				"transactional_id", job.TransactionalID, "partition", tp.String())
			delete(left, tp)
			done(tp)
		case leader >= 0:
			byLeader[leader] = append(byLeader[leader], tp)
		}
	}
	type answer struct {
		tps  []kafka.TopicPartition
		resp *kmsg.WriteTxnMarkersResponse
		err  error
	}
	answers := make(chan answer, len(byLeader))
	var wg sync.WaitGroup
	for leader, tps := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ch.cfg.Sender.SendMarkers(ctx, leader, markerRequest(job, tps))
			if err != nil {
				ch.cfg.Logger.Debug("WriteTxnMarkers failed; retrying", "broker", leader, "err", err)
			}
			answers <- answer{tps, resp, err}
		}()
	}
	wg.Wait()
	close(answers)
	var stop error
	for a := range answers {
		if a.err != nil {
			continue
		}
		for tp, code := range markerCodes(a.resp, job.ProducerID) {
			if !left[tp] {
				continue
			}
			switch markerOutcome(code) {
			case written, dropped:
				delete(left, tp)
				done(tp)
			case fenced:
				stop = fmt.Errorf("%w: %s: %s", ErrMarkerFenced, tp, kerr.ErrorForCode(code))
			case retry:
				ch.cfg.Logger.Debug("transaction marker not written; retrying", "transactional_id", job.TransactionalID,
					"partition", tp.String(), "err", kerr.ErrorForCode(code))
			}
		}
	}
	return stop
}

func keys(m map[kafka.TopicPartition]bool) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	return out
}

// markerRequest is one WriteTxnMarkers with the job's marker for tps.
func markerRequest(job MarkerJob, tps []kafka.TopicPartition) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = job.ProducerID, job.ProducerEpoch, job.Commit, job.CoordinatorEpoch
	for _, tp := range tps { // sorted: one entry per topic
		if n := len(m.Topics); n == 0 || m.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = tp.Topic
			m.Topics = append(m.Topics, t)
		}
		t := &m.Topics[len(m.Topics)-1]
		t.Partitions = append(t.Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, m)
	return req
}

// markerCodes are the per-partition answers for the producer's marker.
func markerCodes(resp *kmsg.WriteTxnMarkersResponse, producerID int64) map[kafka.TopicPartition]int16 {
	out := map[kafka.TopicPartition]int16{}
	if resp == nil {
		return out
	}
	for _, m := range resp.Markers {
		if m.ProducerID != producerID {
			continue
		}
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	return out
}

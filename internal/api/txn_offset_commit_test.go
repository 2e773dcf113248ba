package api

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// offsetsLog is group.Log over the harness's __consumer_offsets partition
// 0: appends as leader, committed at once; nothing to load.
type offsetsLog struct{ p *replica.Partition }

func (l offsetsLog) Append(_ int32, batch []byte) (func(context.Context) error, int64, error) {
	hdrs, err := record.Validate(batch, len(batch))
	if err != nil {
		return nil, 0, err
	}
	info, err := l.p.AppendAsLeader(batch, hdrs, time.Now(), -1)
	if err != nil {
		return nil, 0, err
	}
	return func(context.Context) error { return nil }, info.FirstOffset, nil
}

func (offsetsLog) Load(context.Context, int32, group.LoadFunc) error { return nil }

// offsetsVerifier answers code and counts the questions.
type offsetsVerifier struct {
	code  int16
	asked []kafka.TopicPartition
}

func (v *offsetsVerifier) VerifyPartition(_ context.Context, _ string, _ int64, _ int16, tp kafka.TopicPartition) int16 {
	v.asked = append(v.asked, tp)
	return v.code
}

// KIP-890 part 1 for TxnOffsetCommit: the first commit of a producer's
// transaction on the group's __consumer_offsets partition is verified with
// its transaction coordinator; a refusal is every partition's code (as
// Kafka's maybeConvertOffsetCommitError) and nothing is written; once the
// producer has a transaction open there, no question is asked.
func TestTxnOffsetCommitVerified(t *testing.T) {
	x := newHarness(t)
	p := x.lead(OffsetsTopic, 1, []int32{self}, []int32{self}, 1)
	x.lead("t", 1, []int32{self}, []int32{self}, 1)
	v := &offsetsVerifier{}
	x.h.TxnVerifier = v
	c := group.NewCoordinator(group.CoordinatorConfig{Group: group.Config{MaxSize: 10}, Partitions: 1,
		Retention: time.Hour, CommitTimeout: 10 * time.Second, MetadataMaxBytes: 100, Log: offsetsLog{p}})
	x.h.Groups = c
	c.BecomeLeader(0, 1)
	await(t, "coordinator loaded", func() bool { return c.Serves("g") == nil })

	commit := func(pid int64) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, "tx", "g", pid, 0
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset = 5
		rt.Topic, rt.Partitions = "t", []kmsg.TxnOffsetCommitRequestTopicPartition{rp}
		req.Topics = append(req.Topics, rt)
		return x.do(context.Background(), req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	for i, tc := range []struct {
		name      string
		verifier  int16
		want      int16
		written   bool
		questions int
	}{
		{"not in the transaction", kerr.InvalidTxnState.Code, kerr.InvalidTxnState.Code, false, 1},
		{"coordinator unavailable", kerr.NotEnoughReplicas.Code, kerr.CoordinatorNotAvailable.Code, false, 1},
		{"fenced", kerr.InvalidProducerEpoch.Code, kerr.InvalidProducerEpoch.Code, false, 1},
		{"verified", 0, 0, true, 1},
	} {
		v.code, v.asked = tc.verifier, nil
		before := p.LogEndOffset()
		pid := int64(100 + i)
		if got := commit(pid); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
		}
		if written := p.LogEndOffset() > before; written != tc.written {
			t.Errorf("%s: written %v, want %v", tc.name, written, tc.written)
		}
		if len(v.asked) != tc.questions || v.asked[0] != (kafka.TopicPartition{Topic: OffsetsTopic, Partition: 0}) {
			t.Errorf("%s: asked about %v", tc.name, v.asked)
		}
		if tc.written {
			v.code, v.asked = kerr.InvalidTxnState.Code, nil // would refuse: not asked
			if got := commit(pid); got != 0 || len(v.asked) != 0 {
				t.Errorf("%s: again: %v, asked %v", tc.name, kerr.ErrorForCode(got), v.asked)
			}
		}
	}
}

package txn

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func TestMarkerOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  *kerr.Error
		want outcome
	}{
		{nil, written},
		{kerr.UnknownTopicOrPartition, retry},
		{kerr.NotLeaderForPartition, retry},
		{kerr.NotEnoughReplicas, retry},
		{kerr.NotEnoughReplicasAfterAppend, retry},
		{kerr.RequestTimedOut, retry},
		{kerr.KafkaStorageError, retry},
		{kerr.CoordinatorLoadInProgress, retry},
		{kerr.UnknownServerError, retry},
		{kerr.InvalidProducerEpoch, fenced},
		{kerr.TransactionCoordinatorFenced, fenced},
		{kerr.UnsupportedForMessageFormat, dropped},
		{kerr.UnsupportedVersion, dropped},
	} {
		code := int16(0)
		if tc.err != nil {
			code = tc.err.Code
		}
		if got := markerOutcome(code); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.err, got, tc.want)
		}
	}
}

// script is a fake cluster: leaders per partition, and per broker the
// codes its next answers give (then 0).
type script struct {
	mu      sync.Mutex
	leaders map[kafka.TopicPartition]int32
	codes   map[kafka.TopicPartition][]int16
	sent    map[int32]int // requests per broker
	onSend  func(broker int32)
}

func (s *script) Leader(tp kafka.TopicPartition) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leaders[tp]
	return l, ok
}

func (s *script) SendMarkers(_ context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent[broker]++
	if s.onSend != nil {
		s.onSend(broker)
	}
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				tp := kafka.TopicPartition{Topic: t.Topic, Partition: p}
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if s.leaders[tp] != broker {
					rp.ErrorCode = kerr.NotLeaderForPartition.Code
				} else if c := s.codes[tp]; len(c) > 0 {
					rp.ErrorCode, s.codes[tp] = c[0], c[1:]
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}

func TestChannelRetriesUntilWritten(t *testing.T) {
	gone := kafka.TopicPartition{Topic: "deleted", Partition: 0}
	s := &script{leaders: map[kafka.TopicPartition]int32{tp0: 1, tp1: 2, tp2: 1},
		codes: map[kafka.TopicPartition][]int16{tp2: {kerr.NotEnoughReplicas.Code, kerr.RequestTimedOut.Code}},
		sent:  map[int32]int{}}
	// The first request to broker 2 finds tp1 moved to broker 3.
	s.onSend = func(b int32) {
		if b == 2 {
			s.leaders[tp1] = 3
		}
	}
	ch := NewChannel(ChannelConfig{Sender: s, Leader: s.Leader, Backoff: 1})
	var got []kafka.TopicPartition
	job := MarkerJob{TransactionalID: "x", ProducerID: 5, ProducerEpoch: 2, CoordinatorEpoch: 7, Commit: true,
		Partitions: []kafka.TopicPartition{tp0, tp1, tp2, gone}}
	if err := ch.Write(context.Background(), job, func(tp kafka.TopicPartition) { got = append(got, tp) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("written %v", got)
	}
	if s.sent[1] != 3 || s.sent[2] != 1 || s.sent[3] != 1 {
		t.Errorf("requests per broker %v, want 1:3 2:1 3:1", s.sent)
	}
}

func TestChannelFencedAndNoLeader(t *testing.T) {
	s := &script{leaders: map[kafka.TopicPartition]int32{tp0: 1, tp1: 1},
		codes: map[kafka.TopicPartition][]int16{tp1: {kerr.TransactionCoordinatorFenced.Code}}, sent: map[int32]int{}}
	ch := NewChannel(ChannelConfig{Sender: s, Leader: s.Leader, Backoff: 1})
	err := ch.Write(context.Background(), MarkerJob{ProducerID: 5, Partitions: []kafka.TopicPartition{tp0, tp1}}, func(kafka.TopicPartition) {})
	if !errors.Is(err, ErrMarkerFenced) {
		t.Fatalf("fenced: %v", err)
	}
	// No leader: waits (no request) until ctx ends.
	s.leaders[tp0] = -1
	ctx, cancel := context.WithCancel(context.Background())
	s.sent = map[int32]int{}
	rounds := 0
	ch = NewChannel(ChannelConfig{Sender: s, Backoff: 1, Leader: func(tp kafka.TopicPartition) (int32, bool) {
		if rounds++; rounds == 5 {
			cancel()
		}
		return s.Leader(tp)
	}})
	if err := ch.Write(ctx, MarkerJob{ProducerID: 5, Partitions: []kafka.TopicPartition{tp0}}, func(kafka.TopicPartition) {}); !errors.Is(err, context.Canceled) {
		t.Fatalf("no leader: %v", err)
	}
	if len(s.sent) != 0 {
		t.Errorf("sent %v without a leader", s.sent)
	}
}

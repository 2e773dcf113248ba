package api

// Fetch (key 1), v4–v16, from consumers (replica id -1) and followers
// (replica id >= 0: the ReplicaID field up to v14, ReplicaState.ID from v15).
//
// Long polling: the response is sent as soon as the readable bytes reach
// MinBytes, any partition has an error, or MaxWaitMillis passes; appends (and
// high watermark or leadership changes) wake the waiting fetch. MaxBytes
// bounds the whole response and PartitionMaxBytes each partition, except that
// the first batch of the first partition with data is returned whole even
// when larger (KIP-74). Only the leader serves either kind
// (NOT_LEADER_OR_FOLLOWER), after the KIP-320 leader epoch check. Consumers
// read below the high watermark; followers read up to the log end offset,
// and each of their reads reports the follower's position to the leader
// (replica.Partition.FollowerRead: it may advance the high watermark and
// expand the ISR); a follower not among the replicas gets
// NOT_LEADER_OR_FOLLOWER. Fetch offsets outside [log start, log end] are
// OFFSET_OUT_OF_RANGE, with the log start offset. Diverging epochs (v12+)
// are not reported: followers truncate with OffsetForLeaderEpoch first. v13+
// name topics by id (UNKNOWN_TOPIC_ID when unknown). Sessions: see
// fetch_session.go.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// fetchCtx is one fetch request resolved against its session.
type fetchCtx struct {
	sess        *fetchSession // nil for sessionless fetches
	incremental bool
	parts       []*sessPart
	unknownIDs  []sessPart // v13+: partitions of topic ids we do not know
}

func (h *Handler) fetch(ctx context.Context, req *kmsg.FetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	fc, kerrv := h.resolveFetch(req)
	if kerrv != nil {
		resp.ErrorCode = kerrv.Code
		return resp, nil
	}
	if fc.sess != nil {
		resp.SessionID = fc.sess.id
	}
	w := replica.NewWaiter()
	var waitingOn []*replica.Partition
	for _, sp := range fc.parts {
		if p := h.Partitions.Get(storage.TopicPartition{Topic: sp.key.topic, Partition: sp.key.partition}); p != nil {
			p.AddWaiter(w)
			waitingOn = append(waitingOn, p)
		}
	}
	defer func() {
		for _, p := range waitingOn {
			p.RemoveWaiter(w)
		}
	}()

	replicaID := fetchReplicaID(req)
	deadline := h.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	var timer *time.Timer
	for {
		results, total, failed := h.readFetch(fc.parts, req, replicaID)
		if total >= int(req.MinBytes) || failed || req.MaxWaitMillis <= 0 || !h.Now().Before(deadline) {
			h.buildFetchResponse(resp, fc, req.Version, results)
			return resp, nil
		}
		if timer == nil {
			timer = time.NewTimer(deadline.Sub(h.Now()))
			defer timer.Stop()
		}
		select {
		case <-w.C:
		case <-timer.C:
		case <-ctx.Done(): // the connection is closing: nothing to answer
			return nil, nil
		}
	}
}

// fetchReplicaID is the fetching follower's broker id, or -1 for a
// consumer.
func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// resolveFetch applies the request to the session cache and returns the
// partitions to read, in response order.
func (h *Handler) resolveFetch(req *kmsg.FetchRequest) (*fetchCtx, *kerr.Error) {
	fc := &fetchCtx{}
	reqParts := h.fetchRequestParts(req, fc)
	switch {
	case req.SessionEpoch == -1: // sessionless full fetch
		if req.SessionID != 0 {
			h.sessions.remove(req.SessionID)
		}
		fc.parts = reqParts
		return fc, nil
	case req.SessionEpoch == 0: // full fetch opening a new session
		if req.SessionID != 0 {
			h.sessions.remove(req.SessionID)
		}
		fc.sess = h.sessions.create()
		if fc.sess == nil {
			fc.parts = reqParts
			return fc, nil
		}
		for _, p := range reqParts {
			fc.sess.upsert(*p)
		}
		fc.parts = fc.sess.list()
		return fc, nil
	}
	s, kerrv := h.sessions.lookup(req.SessionID, req.SessionEpoch)
	if kerrv != nil {
		return nil, kerrv
	}
	for _, ft := range req.ForgottenTopics {
		name := ft.Topic
		if req.Version >= 13 {
			t, ok := h.Meta.TopicByID(ft.TopicID)
			if !ok {
				continue
			}
			name = t.Name
		}
		for _, p := range ft.Partitions {
			s.forget(sessKey{name, p})
		}
	}
	for _, p := range reqParts {
		s.upsert(*p)
	}
	fc.sess, fc.incremental, fc.parts = s, true, s.list()
	return fc, nil
}

func (h *Handler) fetchRequestParts(req *kmsg.FetchRequest, fc *fetchCtx) []*sessPart {
	var out []*sessPart
	for _, rt := range req.Topics {
		name, id := rt.Topic, rt.TopicID
		if req.Version >= 13 {
			t, ok := h.Meta.TopicByID(rt.TopicID)
			if !ok {
				for _, rp := range rt.Partitions {
					fc.unknownIDs = append(fc.unknownIDs, sessPart{key: sessKey{partition: rp.Partition}, topicID: id})
				}
				continue
			}
			name = t.Name
		} else if t, ok := h.Meta.Topic(name); ok {
			id = t.ID
		}
		for _, rp := range rt.Partitions {
			out = append(out, &sessPart{
				key: sessKey{name, rp.Partition}, topicID: id,
				fetchOffset: rp.FetchOffset, maxBytes: rp.PartitionMaxBytes, leaderEpoch: rp.CurrentLeaderEpoch,
			})
		}
	}
	return out
}

// fetchResult is what one partition read produced.
type fetchResult struct {
	part         *sessPart
	err          int16
	records      []byte
	hw, logStart int64
}

// readFetch reads every partition within the request's byte limits, for
// the follower replicaID (>= 0) or a consumer.
func (h *Handler) readFetch(parts []*sessPart, req *kmsg.FetchRequest, replicaID int32) ([]fetchResult, int, bool) {
	results := make([]fetchResult, 0, len(parts))
	remaining := int(req.MaxBytes)
	if req.MaxBytes <= 0 {
		remaining = 1<<31 - 1
	}
	total, failed, minOne := 0, false, true
	now := h.Now()
	for _, sp := range parts {
		r := fetchResult{part: sp, hw: -1, logStart: -1}
		limit := int32(max(min(int(sp.maxBytes), remaining), 0))
		if replicaID >= 0 {
			h.readFollower(sp, replicaID, limit, minOne, now, &r)
		} else {
			h.readPartition(sp, limit, minOne, &r)
		}
		if r.err != 0 {
			failed = true
		}
		if len(r.records) > 0 {
			minOne = false
			total += len(r.records)
			remaining -= len(r.records)
		}
		results = append(results, r)
	}
	return results, total, failed
}

// leaderFor returns the partition if this broker leads it at the fetch's
// leader epoch, or sets the error.
func (h *Handler) leaderFor(sp *sessPart, r *fetchResult) *replica.Partition {
	p := h.Partitions.Get(storage.TopicPartition{Topic: sp.key.topic, Partition: sp.key.partition})
	if p == nil {
		r.err = h.missingPartitionCode(sp.key.topic, sp.key.partition)
		return nil
	}
	if !p.IsLeader() {
		r.err = kerr.NotLeaderForPartition.Code
		return nil
	}
	if code := leaderEpochCode(sp.leaderEpoch, p.LeaderEpoch()); code != 0 {
		r.err = code
		return nil
	}
	return p
}

// readFollower reads up to the log end offset for follower replicaID and
// records its fetch offset, even when limit leaves no room for data.
func (h *Handler) readFollower(sp *sessPart, replicaID, limit int32, minOne bool, now time.Time, r *fetchResult) {
	p := h.leaderFor(sp, r)
	if p == nil {
		return
	}
	res, hw, err := p.FollowerRead(replicaID, sp.fetchOffset, limit, minOne, now)
	h.readDone(p, res, hw, err, r)
}

// readPartition reads below the high watermark for a consumer.
func (h *Handler) readPartition(sp *sessPart, limit int32, minOne bool, r *fetchResult) {
	p := h.leaderFor(sp, r)
	if p == nil {
		return
	}
	if limit <= 0 && !minOne {
		r.hw, r.logStart = p.HighWatermark(), p.LogStartOffset()
		return
	}
	res, hw, err := p.Read(sp.fetchOffset, limit, minOne)
	h.readDone(p, res, hw, err, r)
}

func (h *Handler) readDone(p *replica.Partition, res storage.ReadResult, hw int64, err error, r *fetchResult) {
	r.hw, r.logStart = hw, res.LogStartOffset
	if err != nil {
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			r.logStart = p.LogStartOffset()
		}
		r.err = errorCode(err)
		return
	}
	r.records = res.Records
}

// leaderEpochCode checks a client's current leader epoch against ours
// (KIP-320): -1 skips the check.
func leaderEpochCode(client, ours int32) int16 {
	switch {
	case client < 0 || client == ours:
		return 0
	case client > ours:
		return kerr.UnknownLeaderEpoch.Code
	default:
		return kerr.FencedLeaderEpoch.Code
	}
}

func (h *Handler) buildFetchResponse(resp *kmsg.FetchResponse, fc *fetchCtx, version int16, results []fetchResult) {
	var cur *kmsg.FetchResponseTopic
	add := func(name string, id [16]byte, sp kmsg.FetchResponseTopicPartition) {
		if cur == nil || cur.Topic != name || cur.TopicID != id {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = name, id
			resp.Topics = append(resp.Topics, t)
			cur = &resp.Topics[len(resp.Topics)-1]
		}
		cur.Partitions = append(cur.Partitions, sp)
	}
	for _, r := range results {
		sp := r.part
		changed := r.err != 0 || len(r.records) > 0 || r.hw != sp.sentHW || r.logStart != sp.sentLogStart
		if fc.incremental && !changed {
			continue
		}
		sp.sentHW, sp.sentLogStart = r.hw, r.logStart
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = sp.key.partition
		p.ErrorCode = r.err
		p.HighWatermark, p.LastStableOffset, p.LogStartOffset = r.hw, r.hw, r.logStart
		p.RecordBatches = r.records
		if p.RecordBatches == nil { // librdkafka refuses a null record set
			p.RecordBatches = []byte{}
		}
		add(sp.key.topic, sp.topicID, p)
	}
	for _, u := range fc.unknownIDs {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = u.key.partition
		p.ErrorCode = kerr.UnknownTopicID.Code
		p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
		add("", u.topicID, p)
	}
	if fc.sess != nil {
		fc.sess.epoch = nextEpoch(fc.sess.epoch)
	}
}

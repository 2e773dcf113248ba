package api

// Fetch (key 1), v4–v16, from consumers (replica id -1) and followers
// (replica id >= 0: the ReplicaID field up to v14, ReplicaState.ID from v15).
//
// Isolation (KIP-98): a read_committed consumer (isolation level 1) reads
// below the last stable offset and gets the aborted transactions
// overlapping the batches returned (fetch_read.go); every answer carries
// the partition's last stable offset.
//
// Long polling: the response is sent as soon as the readable bytes reach
// MinBytes, any partition has an error, or MaxWaitMillis passes; appends (and
// high watermark or leadership changes) wake the waiting fetch. MaxBytes
// bounds the whole response and PartitionMaxBytes each partition, except that
// the first batch of the first partition with data is returned whole even
// when larger (KIP-74). Only the leader serves either kind
// (NOT_LEADER_OR_FOLLOWER), checked after the KIP-320 leader epoch, as
// Kafka does (a former leader fences a follower still at its old epoch,
// fetch_read.go). Consumers
// read below the high watermark; followers read up to the log end offset,
// and each of their reads reports the follower's position to the leader
// (replica.Partition.FollowerRead: it may advance the high watermark and
// expand the ISR); a follower not among the replicas gets
// NOT_LEADER_OR_FOLLOWER. Fetch offsets outside [log start, log end] are
// OFFSET_OUT_OF_RANGE, with the log start offset. Diverging epochs (v12+)
// are not reported: followers truncate with OffsetForLeaderEpoch first. v13+
// name topics by id (UNKNOWN_TOPIC_ID when unknown). Sessions: see
// fetch_session.go; a fetch in a session waits on the session's wake-up
// (woken by the partitions it listens to), a sessionless one registers a
// waiter on each of its partitions. Each wake-up is a pass: the partitions
// to read (all, or a follower session's changed ones) are read again, and
// the response carries each partition's latest read (fetch_read.go).
//
// consumer_byte_rate (quota.go): a consumer's max_bytes is capped at its
// quota window, and a fetch over its quota answers nothing, throttled.
//
// Zero copy (fetch_sections.go): on a plain TCP connection, consumers' and
// followers' fetches read sections of the segment files, which the server
// sends with sendfile; elsewhere they read the bytes.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/server"
)

// fetchCtx is one fetch request resolved against its session.
type fetchCtx struct {
	sess        *fetchSession // nil for sessionless fetches
	incremental bool
	sweep       bool        // a follower session's fetch reads every partition
	parts       []*sessPart // every partition of a full fetch, in response order
	unknownIDs  []fetchPart // v13+: partitions of topic ids we do not know
	forgotten   []*sessPart // left the session: stop listening
}

func (h *Handler) fetch(ctx context.Context, req *kmsg.FetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	replicaID := fetchReplicaID(req)
	fc, kerrv := h.resolveFetch(req, replicaID)
	if kerrv != nil {
		resp.ErrorCode = kerrv.Code
		return resp, nil
	}
	var wake <-chan struct{}
	if fc.sess != nil {
		defer h.sessions.done(fc.sess)
		resp.SessionID = fc.sess.id
		for _, sp := range fc.forgotten {
			fc.sess.release(sp)
		}
		if s := fc.sess; s.follower {
			now := h.Now()
			s.clock.Fetched(now)
			if !fc.incremental || now.Sub(s.lastSweep) >= sessionSweepInterval {
				fc.sweep, s.lastSweep = true, now
			}
		}
		wake = fc.sess.wake
	} else {
		w := replica.NewWaiter()
		var waitingOn []*replica.Partition
		for _, sp := range fc.parts {
			if p := h.Partitions.Get(sp.key); p != nil {
				p.AddWaiter(w)
				waitingOn = append(waitingOn, p)
			}
		}
		defer func() {
			for _, p := range waitingOn {
				p.RemoveWaiter(w)
			}
		}()
		wake = w.C
	}

	acc := newFetchAcc(int(req.MaxBytes))
	acc.committed = replicaID < 0 && req.IsolationLevel == 1
	acc.sections = server.SendsSections(ctx)
	if req.MaxBytes <= 0 {
		acc.maxBytes = 1<<31 - 1
	}
	acc.maxBytes = h.fetchQuotaBytes(ctx, acc.maxBytes) // consumer_byte_rate (quota.go)
	deadline := h.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	var timer *time.Timer
	for pass := 0; ; pass++ {
		h.readFetch(acc, fc.toRead(pass), replicaID, fc.sess)
		if acc.total >= int(req.MinBytes) || acc.failed > 0 || req.MaxWaitMillis <= 0 || !h.Now().Before(deadline) {
			if h.fetchThrottled(ctx, acc.total) { // quota.go: an empty answer
				acc.release()
				return resp, nil
			}
			h.countFetched(replicaID, acc)
			if secs := h.buildFetchResponse(resp, fc, acc.results); len(secs) > 0 {
				// The server sends and closes them (fetch_sections.go).
				acc.disown()
				server.AttachSections(ctx, secs, fetchPlaceholders(resp))
			}
			server.AfterResponse(ctx, acc.release) // the records are encoded then
			return resp, nil
		}
		if timer == nil {
			timer = time.NewTimer(deadline.Sub(h.Now()))
			defer timer.Stop()
			h.Purgatory.Fetch.Add(1)
			defer h.Purgatory.Fetch.Add(-1)
		}
		resume := quota.Parked(ctx) // not request time (quota.go)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done(): // the connection is closing: nothing to answer
			resume()
			acc.release()
			return nil, nil
		}
		resume()
	}
}

// countFetched counts a fetch response: its record bytes as replication
// bytes out for a follower's, as bytes out over all topics and by topic for
// a consumer's; and its partitions hosted here in the fetch requests over
// all topics and by topic, failed those with an error Kafka counts
// (failedFetch). A topic is looked up once per run of its partitions (a
// fetch names them topic by topic).
func (h *Handler) countFetched(replicaID int32, acc *fetchAcc) {
	follower := replicaID >= 0
	if follower {
		h.Stats.ReplicationBytesOut.Add(int64(acc.total))
	} else {
		h.Stats.BytesOut.Add(int64(acc.total))
	}
	for i := 0; i < len(acc.results); {
		topic, bytes, n, failed := acc.results[i].part.key.Topic, 0, 0, 0
		for ; i < len(acc.results) && acc.results[i].part.key.Topic == topic; i++ {
			r := &acc.results[i]
			if !r.hosted {
				continue
			}
			bytes += r.size()
			n++
			if failedFetch(r.err) {
				failed++
			}
		}
		if n == 0 {
			continue
		}
		ts := h.Stats.Topic(topic)
		if !follower && bytes > 0 {
			ts.BytesOut.Add(int64(bytes))
		}
		h.Stats.CountFetch(ts, n, failed)
	}
}

// failedFetch is whether Kafka counts a partition's fetch error in
// FailedFetchRequestsPerSec: every error but those of a fetcher that must
// look elsewhere, wait or reset its offset (Kafka's
// ReplicaManager.readFromLocalLog returns those without counting them).
func failedFetch(code int16) bool {
	switch code {
	case 0, kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.UnknownLeaderEpoch.Code,
		kerr.FencedLeaderEpoch.Code, kerr.ReplicaNotAvailable.Code, kerr.KafkaStorageError.Code, kerr.OffsetOutOfRange.Code:
		return false
	}
	return true
}

// toRead is what a pass of the fetch reads: every partition, except in a
// follower session, where the first pass of a full fetch or a sweep reads
// every one and the others only those that changed (dirty).
func (fc *fetchCtx) toRead(pass int) []*sessPart {
	s := fc.sess
	if s == nil {
		return fc.parts
	}
	dirty := s.takeDirty()
	if !s.follower || (pass == 0 && fc.sweep) {
		return s.list()
	}
	return dirty
}

// fetchReplicaID is the fetching follower's broker id, or -1 for a
// consumer.
func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// resolveFetch applies the request to the session cache. A session it
// returns is in use until h.sessions.done.
func (h *Handler) resolveFetch(req *kmsg.FetchRequest, replicaID int32) (*fetchCtx, *kerr.Error) {
	fc := &fetchCtx{}
	reqParts := h.fetchRequestParts(req, fc)
	switch {
	case req.SessionEpoch == -1: // sessionless full fetch
		if req.SessionID != 0 {
			h.sessions.remove(req.SessionID)
		}
		fc.parts = sessionless(reqParts)
		return fc, nil
	case req.SessionEpoch == 0: // full fetch opening a new session
		if req.SessionID != 0 {
			h.sessions.remove(req.SessionID)
		}
		fc.sess = h.sessions.create(replicaID)
		if fc.sess == nil {
			fc.parts = sessionless(reqParts)
			return fc, nil
		}
		fc.sess.upsertAll(reqParts)
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
			if sp := s.forget(kafka.TopicPartition{Topic: name, Partition: p}); sp != nil {
				fc.forgotten = append(fc.forgotten, sp)
			}
		}
	}
	s.upsertAll(reqParts)
	fc.sess, fc.incremental = s, true
	return fc, nil
}

// fetchRequestParts lists the partitions of req (those of unknown topic
// ids go to fc.unknownIDs), in one allocation.
func (h *Handler) fetchRequestParts(req *kmsg.FetchRequest, fc *fetchCtx) []fetchPart {
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	out := make([]fetchPart, 0, n)
	for _, rt := range req.Topics {
		name, id := rt.Topic, rt.TopicID
		if req.Version >= 13 {
			t, ok := h.Meta.TopicByID(rt.TopicID)
			if !ok {
				for _, rp := range rt.Partitions {
					fc.unknownIDs = append(fc.unknownIDs, fetchPart{key: kafka.TopicPartition{Partition: rp.Partition}, topicID: id})
				}
				continue
			}
			name = t.Name
		} else if t, ok := h.Meta.Topic(name); ok {
			id = t.ID
		}
		for _, rp := range rt.Partitions {
			out = append(out, fetchPart{
				key: kafka.TopicPartition{Topic: name, Partition: rp.Partition}, topicID: id,
				fetchOffset: rp.FetchOffset, maxBytes: rp.PartitionMaxBytes, leaderEpoch: rp.CurrentLeaderEpoch,
				logStart: rp.LogStartOffset,
			})
		}
	}
	return out
}

// sessionless is ps read outside any session.
func sessionless(ps []fetchPart) []*sessPart {
	parts := make([]sessPart, len(ps))
	out := make([]*sessPart, len(ps))
	for i := range ps {
		parts[i].fetchPart = ps[i]
		out[i] = &parts[i]
	}
	return out
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

// buildFetchResponse answers with results (an incremental fetch only with
// the partitions that changed) and then updates the session: partitions that
// returned records move to the back of an incremental session's order, and a
// follower session's partitions whose answer may change without any event
// (an error, or data left unsent for lack of room) stay dirty for the next
// fetch. It returns the sections resp carries, in order: every section of
// results.
func (h *Handler) buildFetchResponse(resp *kmsg.FetchResponse, fc *fetchCtx, results []fetchResult) (secs []server.Section) {
	var cur *kmsg.FetchResponseTopic
	newTopic := func(name string, id [16]byte) bool { return cur == nil || cur.Topic != name || cur.TopicID != id }
	// add appends a partition answer, opening a topic entry sized for room
	// answers when it is a new topic (a follower's full fetch answers
	// thousands of partitions, mostly grouped by topic).
	add := func(name string, id [16]byte, sp kmsg.FetchResponseTopicPartition, room int) {
		if newTopic(name, id) {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = name, id
			t.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, room)
			resp.Topics = append(resp.Topics, t)
			cur = &resp.Topics[len(resp.Topics)-1]
		}
		cur.Partitions = append(cur.Partitions, sp)
	}
	for i, r := range results {
		sp := r.part
		changed := r.err != 0 || r.size() > 0 || r.hw != sp.sentHW || r.logStart != sp.sentLogStart || r.lso != sp.sentLSO
		if fc.incremental && !changed {
			continue
		}
		sp.sentHW, sp.sentLogStart, sp.sentLSO = r.hw, r.logStart, r.lso
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = sp.key.Partition
		p.ErrorCode = r.err
		p.HighWatermark, p.LastStableOffset, p.LogStartOffset = r.hw, r.lso, r.logStart
		p.AbortedTransactions = r.aborted
		p.RecordBatches = r.records
		if r.section != nil {
			p.RecordBatches = server.SectionPlaceholder()
			secs = append(secs, r.section)
		}
		if p.RecordBatches == nil { // librdkafka refuses a null record set
			p.RecordBatches = []byte{}
		}
		room := 0
		if newTopic(sp.key.Topic, sp.topicID) {
			room = sameTopicRun(results[i:])
		}
		add(sp.key.Topic, sp.topicID, p, room)
	}
	for _, u := range fc.unknownIDs {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition = u.key.Partition
		p.ErrorCode = kerr.UnknownTopicID.Code
		p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
		add("", u.topicID, p, 1)
	}
	s := fc.sess
	if s == nil {
		return secs
	}
	for _, r := range results {
		sp := r.part
		if fc.incremental && r.size() > 0 && s.parts[sp.key] == sp {
			s.moveToBack(sp)
		}
		if s.follower && (r.err != 0 || (r.size() == 0 && r.end > sp.fetchOffset)) {
			s.markDirty(sp)
		}
	}
	return secs
}

// sameTopicRun counts the results at the start of rs for the topic of the
// first.
func sameTopicRun(rs []fetchResult) int {
	n := 0
	for n < len(rs) && rs[n].part.key.Topic == rs[0].part.key.Topic && rs[n].part.topicID == rs[0].part.topicID {
		n++
	}
	return n
}

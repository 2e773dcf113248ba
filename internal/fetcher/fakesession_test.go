// The fake leader's fetch sessions (KIP-227), kept only as far as the
// fetcher's tests need: epoch 0 opens a session with the listed partitions,
// later epochs upsert the listed ones and drop the forgotten ones, a wrong
// id or epoch is a session error; without sessions every fetch is read as
// a sessionless one.
package fetcher

import (
	"slices"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakePart is one partition of a fetch as the leader reads it.
type fakePart struct {
	tp       kafka.TopicPartition
	offset   int64
	epoch    int32
	maxBytes int32
	sentHW   int64
}

type fakeSession struct {
	id, epoch int32 // epoch: the next request's
	parts     map[kafka.TopicPartition]*fakePart
	order     []kafka.TopicPartition
}

func (s *fakeSession) list() []*fakePart {
	out := make([]*fakePart, 0, len(s.order))
	for _, tp := range s.order {
		if p := s.parts[tp]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// requestParts is what req lists.
func requestParts(req *kmsg.FetchRequest) []*fakePart {
	var out []*fakePart
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			out = append(out, &fakePart{tp: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				offset: p.FetchOffset, epoch: p.CurrentLeaderEpoch, maxBytes: p.PartitionMaxBytes, sentHW: -1})
		}
	}
	return out
}

// resolve applies req to the sessions and returns the partitions to answer
// about, the session (nil: sessionless) or a top-level error. Caller holds
// h.mu.
func (h *fakeLeader) resolve(req *kmsg.FetchRequest) ([]*fakePart, *fakeSession, int16) {
	listed := requestParts(req)
	h.listed = append(h.listed, len(listed))
	h.maxParts = max(h.maxParts, len(listed))
	if !h.sessions || req.SessionEpoch < 0 {
		return listed, nil, 0
	}
	if h.sess == nil {
		h.sess = map[int32]*fakeSession{}
	}
	var s *fakeSession
	if req.SessionEpoch == 0 {
		delete(h.sess, req.SessionID)
		h.nextID++
		s = &fakeSession{id: h.nextID, parts: map[kafka.TopicPartition]*fakePart{}}
		h.sess[s.id] = s
	} else {
		s = h.sess[req.SessionID]
		switch {
		case s == nil:
			return nil, nil, kerr.FetchSessionIDNotFound.Code
		case s.epoch != req.SessionEpoch:
			return nil, nil, kerr.InvalidFetchSessionEpoch.Code
		}
	}
	s.epoch++
	for _, ft := range req.ForgottenTopics {
		for _, p := range ft.Partitions {
			tp := kafka.TopicPartition{Topic: ft.Topic, Partition: p}
			delete(s.parts, tp)
			s.order = slices.DeleteFunc(s.order, func(o kafka.TopicPartition) bool { return o == tp })
		}
	}
	for _, p := range listed {
		if cur := s.parts[p.tp]; cur != nil {
			cur.offset, cur.epoch, cur.maxBytes = p.offset, p.epoch, p.maxBytes
			continue
		}
		s.parts[p.tp] = p
		s.order = append(s.order, p.tp)
	}
	return s.list(), s, 0
}

// dropSessions forgets every session (a leader restart).
func (h *fakeLeader) dropSessions() {
	h.mu.Lock()
	clear(h.sess)
	h.mu.Unlock()
}

// listedSince returns how many partitions each Fetch request from the
// i-th on listed.
func (h *fakeLeader) listedSince(i int) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.listed[min(i, len(h.listed)):]...)
}

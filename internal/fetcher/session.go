// session: the follower's side of its incremental fetch session with the
// leader (KIP-227; Kafka's FetchSessionHandler). No I/O.
//
// The first Fetch is full (epoch 0): it lists every partition to fetch and
// asks the leader to open a session. Later ones (epoch 1, 2, ...) list only
// the partitions added or changed since (fetch offset, current leader epoch,
// topic id), and forget the ones no longer fetched (removed, truncating,
// backing off); the leader answers only about partitions with news. Any
// session error, failed request or broken connection makes the next fetch
// full again (epoch 0, closing the old session). A leader that answers a full
// fetch without a session id keeps getting full fetches.
package fetcher

import (
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
)

// sentPart is a partition as the leader's session holds it.
type sentPart struct {
	ps          *partState // the state the request was built for
	offset      int64
	leaderEpoch int32
	topicID     [16]byte
	logStart    int64 // ours: the leader learns it for DeleteRecords' low watermark
}

func (a sentPart) same(b sentPart) bool {
	return a.ps == b.ps && a.offset == b.offset && a.leaderEpoch == b.leaderEpoch && a.topicID == b.topicID &&
		a.logStart == b.logStart
}

// want is the fetch state one partition should have in the leader's
// session: fetched as part, or (fetch false) not at all.
type want struct {
	tp    kafka.TopicPartition
	part  sentPart
	fetch bool
}

type session struct {
	id    int32
	epoch int32           // of the next request; 0: full
	sent  table[sentPart] // sentPart.ps is never nil
}

// full reports whether the next request is a full fetch.
func (s *session) full() bool { return s.epoch == 0 }

// build returns what the next request carries, given the wanted state of
// every fetched partition (full) or of the partitions that may have changed
// since the last request (incremental). The upserts are those of wants,
// moved to its front (wants is overwritten).
func (s *session) build(wants []want) (upserts []want, forgets []kafka.TopicPartition) {
	upserts = wants[:0]
	for i := range wants {
		w := &wants[i]
		cur := s.sent.get(w.tp)
		in := cur.ps != nil
		switch {
		case w.fetch && (s.full() || !in || !cur.same(w.part)):
			upserts = append(upserts, *w)
		case !w.fetch && in && !s.full():
			forgets = append(forgets, w.tp)
		}
	}
	return upserts, forgets
}

// succeeded records the leader's answer to a request built by build
// (respID: the response's session id).
func (s *session) succeeded(respID int32, upserts []want, forgets []kafka.TopicPartition) {
	if s.full() {
		s.sent = table[sentPart]{}
		if respID != 0 {
			s.id, s.epoch = respID, 1
		} else {
			s.id = 0
		}
	} else {
		s.epoch = nextEpoch(s.epoch)
	}
	for _, tp := range forgets {
		s.sent.del(tp)
	}
	s.sent.reserveRuns(len(upserts), func(i int) kafka.TopicPartition { return upserts[i].tp })
	for i := range upserts {
		s.sent.set(upserts[i].tp, upserts[i].part)
	}
}

// failed makes the next request full: after FETCH_SESSION_ID_NOT_FOUND
// without a session, otherwise closing this one.
func (s *session) failed(code int16) {
	if code == kerr.FetchSessionIDNotFound.Code {
		s.id = 0
	}
	s.epoch = 0
}

// empty reports whether the leader's session holds no partition.
func (s *session) empty() bool { return s.sent.len() == 0 }

func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

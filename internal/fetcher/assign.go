// assign: which of a source broker's num.replica.fetchers fetchers fetches a
// partition (Kafka's AbstractFetcherManager.getFetcherId), and which
// partitions change fetcher when that number changes (resizeThreadPool).
// Pure functions: the Manager applies their answers.
package fetcher

import (
	"iter"
	"math"
	"unicode/utf16"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// fetcherKey names one fetcher: its source broker and its id there.
type fetcherKey struct {
	leader int32
	id     int32 // 0 ... num.replica.fetchers-1
}

// javaStringHash is Java's String.hashCode: the sum of s[i]*31^(n-1-i)
// over the UTF-16 code units of s, in int32 arithmetic.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 { // two code units: a surrogate pair
			r1, r2 := utf16.EncodeRune(r)
			h = 31*(31*h+r1) + r2
			continue
		}
		h = 31*h + r
	}
	return h
}

// fetcherID is Kafka's getFetcherId: Utils.abs(31*topic.hashCode() +
// partition) % n, with topicHash the topic's javaStringHash. Utils.abs
// maps Integer.MIN_VALUE to 0.
func fetcherID(topicHash, partition, n int32) int32 {
	v := 31*topicHash + partition
	switch {
	case v == math.MinInt32:
		v = 0
	case v < 0:
		v = -v
	}
	return v % n
}

// fetcherIDs gives the fetcher ids of partitions listed topic by topic
// (a LeaderAndIsr, a table), hashing a topic's name once per run of it.
type fetcherIDs struct {
	n      int32 // fetchers per source broker, >= 1
	topic  string
	hash   int32
	hashed bool
}

func (c *fetcherIDs) of(tp kafka.TopicPartition) int32 {
	if c.n <= 1 {
		return 0
	}
	if !c.hashed || tp.Topic != c.topic {
		c.topic, c.hash, c.hashed = tp.Topic, javaStringHash(tp.Topic), true
	}
	return fetcherID(c.hash, tp.Partition, c.n)
}

// move is a partition changing fetcher.
type move struct {
	tp       kafka.TopicPartition
	from, to fetcherKey
}

// redistribute lists the partitions of parts (each with the fetcher it is
// in) whose fetcher id differs with n fetchers per source broker, in the
// order of parts. The others stay where they are, in their fetch state:
// with Kafka's resizeThreadPool, which re-adds every partition, those keep
// their state too.
func redistribute(parts iter.Seq2[kafka.TopicPartition, fetcherKey], n int32) []move {
	ids := fetcherIDs{n: n}
	var moves []move
	for tp, from := range parts {
		if to := (fetcherKey{from.leader, ids.of(tp)}); to != from {
			moves = append(moves, move{tp, from, to})
		}
	}
	return moves
}

package kafka

import (
	"maps"
	"testing"
)

// A topic's counters add to the all-topics ones, appear with its first
// bytes and go with RemoveTopic; a topic counted again after starts from 0.
func TestBrokerTopicStats(t *testing.T) {
	var s BrokerTopicStats
	s.CountIn(s.Topic("a"), 100, 3)
	s.CountIn(s.Topic("b"), 10, 1)
	s.BytesOut.Add(250) // as the fetch handler counts a response
	s.Topic("a").BytesOut.Add(250)
	s.CountProduce(s.Topic("a"), false)
	s.CountProduce(s.Topic("a"), true)
	if a := s.Topic("a"); a.TotalProduce.Load() != 2 || a.FailedProduce.Load() != 1 || s.TotalProduce.Load() != 2 || s.FailedProduce.Load() != 1 {
		t.Fatalf("produce requests: a %d/%d failed, all %d/%d", a.FailedProduce.Load(), a.TotalProduce.Load(), s.FailedProduce.Load(), s.TotalProduce.Load())
	}
	s.CountFetch(s.Topic("b"), 3, 0)
	s.CountFetch(s.Topic("b"), 2, 1)
	if b := s.Topic("b"); b.TotalFetch.Load() != 5 || b.FailedFetch.Load() != 1 || s.TotalFetch.Load() != 5 || s.FailedFetch.Load() != 1 {
		t.Fatalf("fetch requests: b %d/%d failed, all %d/%d", b.FailedFetch.Load(), b.TotalFetch.Load(), s.FailedFetch.Load(), s.TotalFetch.Load())
	}
	each := func() map[string][3]int64 {
		m := map[string][3]int64{}
		s.EachTopic(func(topic string, t *TopicStats) {
			m[topic] = [3]int64{t.BytesIn.Load(), t.MessagesIn.Load(), t.BytesOut.Load()}
		})
		return m
	}
	if got, want := each(), map[string][3]int64{"a": {100, 3, 250}, "b": {10, 1, 0}}; !maps.Equal(got, want) {
		t.Fatalf("by topic %v, want %v", got, want)
	}
	if in, msgs, out := s.BytesIn.Load(), s.MessagesIn.Load(), s.BytesOut.Load(); in != 110 || msgs != 4 || out != 250 {
		t.Fatalf("all topics: in %d messages %d out %d", in, msgs, out)
	}
	s.RemoveTopic("a")
	if got, want := each(), map[string][3]int64{"b": {10, 1, 0}}; !maps.Equal(got, want) {
		t.Fatalf("after removing a: %v, want %v", got, want)
	}
	s.Topic("a").BytesOut.Add(5)
	if got := each()["a"]; got != [3]int64{0, 0, 5} {
		t.Fatalf("a counted again: %v", got)
	}
	if in := s.BytesIn.Load(); in != 110 {
		t.Fatalf("all topics' bytes in %d after a topic went: they stay", in)
	}
}

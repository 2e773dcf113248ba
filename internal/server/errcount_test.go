package server

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A response's error codes other than NONE are found at every level: a
// Fetch answer's own and its partitions', a DescribeGroups answer's
// groups', a ListOffsets answer's partitions'; one with none gives none.
func TestResponseErrors(t *testing.T) {
	fetch := kmsg.NewPtrFetchResponse()
	ft := kmsg.NewFetchResponseTopic()
	for _, code := range []int16{0, kerr.OffsetOutOfRange.Code, 0} {
		fp := kmsg.NewFetchResponseTopicPartition()
		fp.ErrorCode = code
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = append(fetch.Topics, ft, ft)
	fetch.ErrorCode = kerr.FetchSessionIDNotFound.Code

	groups := kmsg.NewPtrDescribeGroupsResponse()
	for _, code := range []int16{kerr.CoordinatorNotAvailable.Code, kerr.GroupAuthorizationFailed.Code, kerr.CoordinatorNotAvailable.Code} {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.ErrorCode = code
		groups.Groups = append(groups.Groups, g)
	}

	offsets := kmsg.NewPtrListOffsetsResponse()
	ot := kmsg.NewListOffsetsResponseTopic()
	op := kmsg.NewListOffsetsResponseTopicPartition()
	op.ErrorCode = kerr.NotLeaderForPartition.Code
	ot.Partitions = append(ot.Partitions, op)
	offsets.Topics = append(offsets.Topics, ot)

	for _, c := range []struct {
		name string
		resp kmsg.Response
		want map[int16]int
	}{
		{"fetch", fetch, map[int16]int{kerr.FetchSessionIDNotFound.Code: 1, kerr.OffsetOutOfRange.Code: 2}},
		{"describe groups", groups, map[int16]int{kerr.CoordinatorNotAvailable.Code: 2, kerr.GroupAuthorizationFailed.Code: 1}},
		{"list offsets", offsets, map[int16]int{kerr.NotLeaderForPartition.Code: 1}},
		{"empty list offsets", kmsg.NewPtrListOffsetsResponse(), map[int16]int{}},
	} {
		got := map[int16]int{}
		responseErrors(c.resp, func(code int16, n int) { got[code] += n })
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if n := errorName(3); n != "UNKNOWN_TOPIC_OR_PARTITION" {
		t.Errorf("code 3 named %q", n)
	}
	if n := errorName(30000); n != "UNKNOWN_SERVER_ERROR" {
		t.Errorf("an unknown code named %q", n)
	}
}

// BenchmarkResponseErrors: the walk of a Produce answer of 16 partitions
// without an error, as counted for each one.
func BenchmarkResponseErrors(b *testing.B) {
	resp := kmsg.NewPtrProduceResponse()
	rt := kmsg.NewProduceResponseTopic()
	for range 16 {
		rt.Partitions = append(rt.Partitions, kmsg.NewProduceResponseTopicPartition())
	}
	resp.Topics = append(resp.Topics, rt)
	found := 0
	b.ReportAllocs()
	for b.Loop() {
		responseErrors(resp, func(int16, int) { found++ })
	}
	if found != 0 {
		b.Fatal(found)
	}
}

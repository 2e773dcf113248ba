package api

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// fakeElections answers from a table and records what it was asked.
type fakeElections struct {
	codes   map[kafka.TopicPartition]int16
	typ     int8
	asked   []kafka.TopicPartition
	timeout time.Duration
}

func (f *fakeElections) ElectLeaders(ctx context.Context, timeout time.Duration, typ int8, tps []kafka.TopicPartition) []ElectionResult {
	f.typ, f.asked, f.timeout = typ, tps, timeout
	var out []ElectionResult
	for _, tp := range tps {
		code, ok := f.codes[tp]
		if !ok {
			code = kerr.UnknownTopicOrPartition.Code
		}
		r := ElectionResult{Partition: tp, Code: code}
		if code == kerr.ElectionNotNeeded.Code {
			msg := "Leader election not needed for topic partition."
			r.Message = &msg
		}
		out = append(out, r)
	}
	return out
}

func electReq(version int16, typ int8, topics map[string][]int32) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType = version, typ
	for _, name := range []string{"b", "a", "zz"} { // not sorted on purpose
		if ps, ok := topics[name]; ok {
			t := kmsg.NewElectLeadersRequestTopic()
			t.Topic, t.Partitions = name, ps
			req.Topics = append(req.Topics, t)
		}
	}
	return req
}

// summary prints a response as "topic-p:CODE" items in order.
func electSummary(resp *kmsg.ElectLeadersResponse) string {
	var items []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			items = append(items, fmt.Sprintf("%s-%d:%s", t.Topic, p.Partition, codeText(p.ErrorCode)))
		}
	}
	return fmt.Sprintf("top=%s %s", codeText(resp.ErrorCode), strings.Join(items, " "))
}

func codeText(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func TestElectLeaders(t *testing.T) {
	tp := func(topic string, p int32) kafka.TopicPartition {
		return kafka.TopicPartition{Topic: topic, Partition: p}
	}
	meta := &fakeMeta{topics: map[string]TopicInfo{
		"a": {Name: "a", Partitions: []PartitionInfo{{ID: 0}, {ID: 1}}},
		"b": {Name: "b", Partitions: []PartitionInfo{{ID: 0}}},
	}}
	el := &fakeElections{codes: map[kafka.TopicPartition]int16{
		tp("a", 0): 0, tp("a", 1): kerr.ElectionNotNeeded.Code, tp("b", 0): kerr.PreferredLeaderNotAvailable.Code,
	}}
	h := New(Config{NodeID: self, Meta: meta, Elections: el})

	// Named partitions: every one answered (repeats once), sorted by topic
	// and partition; the election type and the timeout are passed on.
	req := electReq(2, 1, map[string][]int32{"b": {0}, "a": {1, 0, 1}, "zz": {3}})
	req.TimeoutMillis = 5000
	resp := serveElect(t, h, req)
	if got, want := electSummary(resp), "top=NONE a-0:NONE a-1:ELECTION_NOT_NEEDED b-0:PREFERRED_LEADER_NOT_AVAILABLE zz-3:UNKNOWN_TOPIC_OR_PARTITION"; got != want {
		t.Errorf("named partitions:\n got %s\nwant %s", got, want)
	}
	if el.typ != 1 || len(el.asked) != 4 || el.timeout != 5*time.Second {
		t.Errorf("asked type %d for %v with timeout %v", el.typ, el.asked, el.timeout)
	}
	if m := resp.Topics[0].Partitions[1].ErrorMessage; m == nil || *m == "" {
		t.Errorf("ELECTION_NOT_NEEDED without its message")
	}
	if resp.Topics[0].Partitions[0].ErrorMessage != nil {
		t.Errorf("success with a message")
	}

	// A null topic list: every partition of the metadata, and those not
	// needing an election are left out.
	req = electReq(1, 0, nil)
	if got, want := electSummary(serveElect(t, h, req)), "top=NONE a-0:NONE b-0:PREFERRED_LEADER_NOT_AVAILABLE"; got != want {
		t.Errorf("all partitions:\n got %s\nwant %s", got, want)
	}
	if len(el.asked) != 3 {
		t.Errorf("asked for %v, want the 3 partitions of the metadata", el.asked)
	}

	// v0 has no election type: always preferred.
	req = electReq(0, 1, map[string][]int32{"a": {0}})
	serveElect(t, h, req)
	if el.typ != 0 {
		t.Errorf("v0 asked type %d", el.typ)
	}

	// An empty list elects nothing.
	req = electReq(2, 0, map[string][]int32{})
	req.Topics = []kmsg.ElectLeadersRequestTopic{}
	if got := electSummary(serveElect(t, h, req)); got != "top=NONE " {
		t.Errorf("empty list: %s", got)
	}

	// Unknown election type.
	req = electReq(1, 5, map[string][]int32{"a": {0}})
	if got, want := electSummary(serveElect(t, h, req)), "top=INVALID_REQUEST a-0:INVALID_REQUEST"; got != want {
		t.Errorf("unknown type: %s, want %s", got, want)
	}

	// Without a controller to ask.
	h = New(Config{NodeID: self, Meta: meta})
	req = electReq(2, 0, map[string][]int32{"a": {0}, "b": {0}})
	if got, want := electSummary(serveElect(t, h, req)), "top=NONE a-0:NOT_CONTROLLER b-0:NOT_CONTROLLER"; got != want {
		t.Errorf("no elections: %s, want %s", got, want)
	}
}

// serveElect serves req through Handle, as read from a connection.
func serveElect(t *testing.T, h *Handler, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	t.Helper()
	resp, err := h.Handle(context.Background(), nil, wire.RequestHeader{Key: req.Key(), Version: req.Version}, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ElectLeadersResponse)
}

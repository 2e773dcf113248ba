package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listenerMeta: brokers 1 and 2 have INTERNAL and EXTERNAL listeners,
// broker 3 only INTERNAL; topic t has partitions led by 2 and 3.
type listenerMeta struct{ fakeMeta }

var listenerBrokers = map[string][]BrokerInfo{
	"INTERNAL": {{ID: 1, Host: "kafka-1", Port: 9092}, {ID: 2, Host: "kafka-2", Port: 9092}, {ID: 3, Host: "kafka-3", Port: 9092}},
	"EXTERNAL": {{ID: 1, Host: "public", Port: 19091}, {ID: 2, Host: "public", Port: 19092}},
}

func (m *listenerMeta) Brokers() []BrokerInfo           { return listenerBrokers["INTERNAL"] }
func (m *listenerMeta) BrokersOn(l string) []BrokerInfo { return listenerBrokers[l] }

func newListenerHandler() *Handler {
	meta := &listenerMeta{fakeMeta{topics: map[string]TopicInfo{"t": {Name: "t", Partitions: []PartitionInfo{
		{ID: 0, Leader: 2, Replicas: []int32{2, 3}, ISR: []int32{2, 3}},
		{ID: 1, Leader: 3, Replicas: []int32{3, 2}, ISR: []int32{3, 2}},
	}}}}}
	return New(Config{NodeID: 1, Meta: meta})
}

// Metadata answers with the brokers of the request's listener; a partition
// whose leader lacks it has no leader and LISTENER_NOT_FOUND (v6+) or
// LEADER_NOT_AVAILABLE (below), as Kafka's ZkMetadataCache.
func TestMetadataPerListener(t *testing.T) {
	h := newListenerHandler()
	for _, tt := range []struct {
		listener string
		version  int16
		brokers  int
		leader1  int32
		code1    int16
	}{
		{"INTERNAL", 12, 3, 3, 0},
		{"EXTERNAL", 12, 2, -1, kerr.ListenerNotFound.Code},
		{"EXTERNAL", 6, 2, -1, kerr.ListenerNotFound.Code},
		{"EXTERNAL", 5, 2, -1, kerr.LeaderNotAvailable.Code},
	} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = tt.version
		resp := h.metadata(context.Background(), req, tt.listener).(*kmsg.MetadataResponse)
		if len(resp.Brokers) != tt.brokers {
			t.Errorf("%s v%d: %d brokers, want %d", tt.listener, tt.version, len(resp.Brokers), tt.brokers)
		}
		for i, b := range resp.Brokers {
			if want := listenerBrokers[tt.listener][i]; b.NodeID != want.ID || b.Host != want.Host || b.Port != want.Port {
				t.Errorf("%s: broker %+v, want %+v", tt.listener, b, want)
			}
		}
		ps := resp.Topics[0].Partitions
		if ps[0].Leader != 2 || ps[0].ErrorCode != 0 {
			t.Errorf("%s v%d: partition 0 leader %d code %d", tt.listener, tt.version, ps[0].Leader, ps[0].ErrorCode)
		}
		if ps[1].Leader != tt.leader1 || ps[1].ErrorCode != tt.code1 {
			t.Errorf("%s v%d: partition 1 leader %d code %d, want %d %d", tt.listener, tt.version, ps[1].Leader, ps[1].ErrorCode, tt.leader1, tt.code1)
		}
	}
}

func TestDescribeClusterPerListener(t *testing.T) {
	h := newListenerHandler()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType = 1, 1
	resp := h.describeCluster(req, "EXTERNAL").(*kmsg.DescribeClusterResponse)
	if len(resp.Brokers) != 2 || resp.Brokers[1].Host != "public" || resp.Brokers[1].Port != 19092 {
		t.Errorf("brokers %+v, want EXTERNAL's two", resp.Brokers)
	}
}

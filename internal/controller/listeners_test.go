package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every listener of every live broker reaches the brokers in UpdateMetadata
// (their metadata caches answer clients per listener); LeaderAndIsr's live
// leaders are at their inter-broker listener.
func TestListenersInControllerRequests(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.nodes[1].sender.take()
	cl.createTopic("orders", map[int32][]int32{0: {2, 3, 1}})
	var um *kmsg.UpdateMetadataRequest
	var lisr *kmsg.LeaderAndISRRequest
	for _, s := range cl.nodes[1].sender.take() {
		switch r := s.req.(type) {
		case *kmsg.UpdateMetadataRequest:
			um = r
		case *kmsg.LeaderAndISRRequest:
			lisr = r
		}
	}
	if um == nil || lisr == nil {
		t.Fatal("no UpdateMetadata or LeaderAndIsr sent")
	}
	if len(um.LiveBrokers) != 3 {
		t.Fatalf("%d live brokers", len(um.LiveBrokers))
	}
	for _, b := range um.LiveBrokers {
		var got []string
		for _, e := range b.Endpoints {
			got = append(got, fmt.Sprintf("%s://%s:%d/%d", e.ListenerName, e.Host, e.Port, e.SecurityProtocol))
		}
		want := []string{fmt.Sprintf("EXTERNAL://kafka-%d.example.com:19092/0", b.ID), fmt.Sprintf("PLAINTEXT://127.0.0.1:%d/0", 9092+b.ID)}
		if !slices.Equal(got, want) {
			t.Errorf("broker %d endpoints %v, want %v", b.ID, got, want)
		}
	}
	if len(lisr.LiveLeaders) != 1 || lisr.LiveLeaders[0].BrokerID != 2 || lisr.LiveLeaders[0].Host != "127.0.0.1" || lisr.LiveLeaders[0].Port != 9094 {
		t.Errorf("live leaders %+v, want broker 2 at 127.0.0.1:9094", lisr.LiveLeaders)
	}
}

package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
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

// A broker that rewrites its registration with a new listener (its
// listeners changed at run time, same session and epoch) is Kafka's
// BrokerModification: every live broker gets an UpdateMetadata with the
// new endpoints, and nothing fails over.
func TestBrokerRegistrationModified(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("orders", map[int32][]int32{0: {2, 3, 1}})
	cl.nodes[1].sender.take()
	epoch := cl.state("orders", 0).LeaderEpoch

	n := cl.nodes[2]
	reg := testRegistration(2)
	eps := append(reg.EndpointList(), metadata.Endpoint{Listener: "EXTERNAL2", Host: "localhost", Port: 29092, Protocol: "PLAINTEXT"})
	if err := metadata.New(n.client).UpdateBrokerRegistration(cl.ctx, n.sess, metadata.NewBroker(2, eps, "", time.Unix(0, 0))); err != nil {
		t.Fatal(err)
	}
	cl.settle()

	got := map[int32]bool{}
	for _, s := range cl.nodes[1].sender.take() {
		um, ok := s.req.(*kmsg.UpdateMetadataRequest)
		if !ok {
			t.Errorf("broker %d sent %T, want only UpdateMetadata", s.broker, s.req)
			continue
		}
		got[s.broker] = true
		if len(um.LiveBrokers) != 3 {
			t.Errorf("%d live brokers", len(um.LiveBrokers))
		}
		for _, b := range um.LiveBrokers {
			var names []string
			for _, e := range b.Endpoints {
				names = append(names, fmt.Sprintf("%s:%d", e.ListenerName, e.Port))
			}
			if b.ID == 2 && !slices.Contains(names, "EXTERNAL2:29092") {
				t.Errorf("broker 2's endpoints %v lack EXTERNAL2:29092", names)
			}
		}
	}
	if len(got) != 3 {
		t.Errorf("UpdateMetadata sent to %v, want brokers 1, 2 and 3", got)
	}
	if e := cl.state("orders", 0).LeaderEpoch; e != epoch {
		t.Errorf("leader epoch %d, want %d: the modification was taken for a bounce", e, epoch)
	}
}

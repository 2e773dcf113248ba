package controller

// Scenario commands for partition reassignment (testdata/reassign_*.txt),
// and the loop's entry points.
//
//	reassign [to=N]
//	t-0: 2 3        (target replicas)
//	t-1: cancel     (null target)
//
// sends one AlterPartitionReassignments to controller `to` (default: the
// active one) and prints each partition's answer, the number of store
// writes, and the LeaderAndIsr partitions it sent with their replica sets.
//
//	list-reassignments [topic=t partitions=(0,1)]
//	assignment topic=t
//
// print the controller's ListPartitionReassignments answer, and the topic's
// assignment document as stored.

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// reassignmentCommands runs the commands above.
func (s *scenario) reassignmentCommands(d *datadriven.TestData, out *strings.Builder) bool {
	switch d.Cmd {
	case "reassign":
		s.reassign(d, out)
	case "list-reassignments":
		req := kmsg.NewPtrListPartitionReassignmentsRequest()
		if d.HasArg("topic") {
			var topic string
			var ps []int
			d.ScanArgs(s.t, "topic", &topic)
			d.ScanArgs(s.t, "partitions", &ps)
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic = topic
			for _, p := range ps {
				rt.Partitions = append(rt.Partitions, int32(p))
			}
			req.Topics = append(req.Topics, rt)
		}
		var resp *kmsg.ListPartitionReassignmentsResponse
		s.handle(s.activeID(), ListReassignments{Req: req, Reply: func(r *kmsg.ListPartitionReassignmentsResponse) { resp = r }})
		fmt.Fprintf(out, "error=%s\n", codeName(resp.ErrorCode))
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				fmt.Fprintf(out, "%s-%d replicas=%v adding=%v removing=%v\n", t.Topic, p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas)
			}
		}
	case "assignment":
		var topic string
		d.ScanArgs(s.t, "topic", &topic)
		kv, found, err := s.store.Get(s.ctx, metadata.TopicKey(topic))
		if err != nil {
			s.t.Fatal(err)
		}
		if !found {
			out.WriteString("no assignment\n")
			break
		}
		a, err := metadata.DecodeAssignment(kv.Value)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, p := range a.SortedPartitions() {
			pa := a.Partition(p)
			fmt.Fprintf(out, "%s-%d replicas=%v adding=%v removing=%v\n", topic, p, pa.Replicas, pa.Adding, pa.Removing)
		}
	default:
		return false
	}
	return true
}

func (s *scenario) reassign(d *datadriven.TestData, out *strings.Builder) {
	to := s.targetArg(d)
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	byTopic := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		part, rest, _ := strings.Cut(line, ":")
		tp := parseTP(s.t, strings.TrimSpace(part))
		p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		p.Partition = tp.Partition
		if strings.TrimSpace(rest) != "cancel" {
			p.Replicas = []int32{}
			for _, f := range strings.Fields(rest) {
				p.Replicas = append(p.Replicas, atoi32(s.t, f))
			}
		}
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[tp.Topic] = i
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	before := s.store.Revision()
	var replies []*kmsg.AlterPartitionAssignmentsResponse
	s.handle(to, AlterReassignments{Req: req, Reply: func(r *kmsg.AlterPartitionAssignmentsResponse) { replies = append(replies, r) }})
	resp := oneReply(s.t, replies)
	fmt.Fprintf(out, "response error=%s\n", codeName(resp.ErrorCode))
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(out, "%s-%d: %s", t.Topic, p.Partition, codeName(p.ErrorCode))
			if p.ErrorMessage != nil {
				fmt.Fprintf(out, " (%s)", *p.ErrorMessage)
			}
			out.WriteString("\n")
		}
	}
	fmt.Fprintf(out, "store writes=%d\n", s.store.Revision()-before)
	var lines []string
	for _, sr := range s.nodes[to].sender.sentSoFar() {
		if r, ok := sr.req.(*kmsg.LeaderAndISRRequest); ok {
			for _, t := range r.TopicStates {
				for _, p := range t.PartitionStates {
					lines = append(lines, fmt.Sprintf("lair →%d %s-%d replicas=%v adding=%v removing=%v is_new=%v",
						sr.broker, t.Topic, p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas, p.IsNew))
				}
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
}

// The loop's entry points: an inactive controller answers NOT_CONTROLLER,
// an ended context REQUEST_TIMED_OUT, the active one through its loop.
func TestLoopReassignments(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {1, 2}})
	alter := func() *kmsg.AlterPartitionAssignmentsRequest {
		req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		rt.Topic = "t"
		p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		p.Replicas = []int32{2, 3}
		rt.Partitions = append(rt.Partitions, p)
		req.Topics = append(req.Topics, rt)
		return req
	}
	list := kmsg.NewPtrListPartitionReassignmentsRequest()

	inactive := NewLoop(cl.nodes[2].c)
	if r := inactive.AlterPartitionReassignments(cl.ctx, alter()); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("inactive controller answered %v", codeName(r.ErrorCode))
	}
	if r := inactive.ListPartitionReassignments(cl.ctx, list); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("inactive controller listed with %v", codeName(r.ErrorCode))
	}
	idle := NewLoop(cl.nodes[1].c) // nobody runs it
	if r := idle.AlterPartitionReassignments(cl.endedContext(), alter()); r.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("with its context ended: %v", codeName(r.ErrorCode))
	}

	l, wait := cl.runLoop(1)
	r := l.AlterPartitionReassignments(wait, alter())
	if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", r)
	}
	lr := l.ListPartitionReassignments(wait, list)
	if lr.ErrorCode != 0 || len(lr.Topics) != 1 || len(lr.Topics[0].Partitions) != 1 {
		t.Fatalf("list: %+v", lr)
	}
	if p := lr.Topics[0].Partitions[0]; fmt.Sprint(p.Replicas, p.AddingReplicas, p.RemovingReplicas) != "[2 3 1] [3] [1]" {
		t.Fatalf("listed %+v", p)
	}
}

// A standby's warm context keeps the adding and removing replicas it sees
// in the store, so that failing over from it resumes the reassignment.
func TestWarmContextKeepsReassignment(t *testing.T) {
	cl := newCluster(t, 1)
	a := metadata.Assignment{Partitions: map[int32][]int32{0: {2, 3, 1}}, AddingReplicas: map[int32][]int32{0: {3}},
		RemovingReplicas: map[int32][]int32{0: {1}}}
	c := cl.nodes[1].c
	kv := metastore.KV{Key: metadata.TopicKey("t"), Value: metadata.EncodeAssignment(a), Version: 5}
	c.Handle(cl.ctx, storeChange{snapshot: true, kvs: []metastore.KV{kv}, revision: 5})
	pa := c.warm.fullAssignment(TP{Topic: "t", Partition: 0})
	if fmt.Sprint(pa.Replicas, pa.Adding, pa.Removing) != "[2 3 1] [3] [1]" {
		t.Fatalf("warm context holds %+v", pa)
	}
	if got := c.warm.reassigningPartitions(); len(got) != 1 {
		t.Fatalf("reassigning partitions %v", got)
	}
}

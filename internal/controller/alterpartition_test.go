package controller

// Scenario commands for AlterPartition (testdata/alter_partition*.txt), and
// the loop's entry point.
//
//	alter-partition broker=2 [to=1] [version=2] [broker-epoch=N]
//	t-0 isr=2,3 [leader-epoch=N] [partition-epoch=N] [stale-member=3]
//
// sends one request from broker `broker` to controller `to` (default: the
// active one) and prints the response, the number of store writes, and the
// partitions of the UpdateMetadata it sent. Leader and partition epochs
// default to the stored state's, the broker epoch to the registration's,
// topic ids to the assignment's; stale-member gives that ISR member a wrong
// broker epoch (v3).

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// moreCommands runs the commands defined outside scenario_test.go.
func (s *scenario) moreCommands(d *datadriven.TestData, out *strings.Builder) bool {
	switch d.Cmd {
	case "alter-partition":
		s.alterPartition(d, out)
		return true
	case "controlled-shutdown":
		s.controlledShutdown(d, out)
		return true
	case "elect-leaders":
		s.electLeaders(d, out)
		return true
	case "auto-rebalance":
		s.autoRebalance(d, out)
		return true
	case "set-config":
		s.setConfig(d)
		return true
	}
	return s.reassignmentCommands(d, out)
}

func (s *scenario) alterPartition(d *datadriven.TestData, out *strings.Builder) {
	var broker int
	version := 2
	d.ScanArgs(s.t, "broker", &broker)
	to := s.targetArg(d)
	d.MaybeScanArgs(s.t, "version", &version)
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = int16(version), int32(broker), s.brokerEpoch(int32(broker))
	s.brokerEpochArg(d, &req.BrokerEpoch)
	byTopic := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		tp, p := s.alterPartitionLine(line)
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewAlterPartitionRequestTopic()
			t.Topic, t.TopicID = tp.Topic, s.topicID(tp.Topic)
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[tp.Topic] = i
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}

	before := s.store.Revision()
	var replies []*kmsg.AlterPartitionResponse
	s.handle(to, AlterPartition{Req: req, Reply: func(r *kmsg.AlterPartitionResponse) { replies = append(replies, r) }})
	resp := oneReply(s.t, replies)
	fmt.Fprintf(out, "response error=%s\n", codeName(resp.ErrorCode))
	for i, t := range resp.Topics {
		name := t.Topic
		if version >= 2 {
			name = req.Topics[i].Topic // the response names the topic by id only
		}
		for _, p := range t.Partitions {
			fmt.Fprintf(out, "%s-%d: %s", name, p.Partition, codeName(p.ErrorCode))
			if p.ErrorCode == 0 {
				fmt.Fprintf(out, " leader=%d leader_epoch=%d partition_epoch=%d isr=%v", p.LeaderID, p.LeaderEpoch, p.PartitionEpoch, p.ISR)
			}
			out.WriteString("\n")
		}
	}
	fmt.Fprintf(out, "store writes=%d active=%v\n", s.store.Revision()-before, s.nodes[to].c.IsActive())
	for _, sr := range s.nodes[to].sender.sentSoFar() {
		if um, ok := sr.req.(*kmsg.UpdateMetadataRequest); ok {
			for _, t := range um.TopicStates {
				for _, p := range t.PartitionStates {
					fmt.Fprintf(out, "um: %s-%d leader=%d leader_epoch=%d isr=%v zk_version=%d\n", t.Topic, p.Partition, p.Leader, p.LeaderEpoch, p.ISR, p.ZKVersion)
				}
			}
			break // every broker gets the same body
		}
	}
}

func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func atoi32(t *testing.T, s string) int32 {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return int32(n)
}

// alterPartitionLine reads one partition line of the command:
// t-0 isr=2,3 [leader-epoch=N] [partition-epoch=N] [stale-member=3].
func (s *scenario) alterPartitionLine(line string) (TP, kmsg.AlterPartitionRequestTopicPartition) {
	fields := strings.Fields(line)
	tp := parseTP(s.t, fields[0])
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		args[k] = v
	}
	p := kmsg.NewAlterPartitionRequestTopicPartition()
	p.Partition = tp.Partition
	if st, ok := s.storedState(tp); ok {
		p.LeaderEpoch, p.PartitionEpoch = st.LeaderEpoch, st.PartitionEpoch
	}
	if v, ok := args["leader-epoch"]; ok {
		p.LeaderEpoch = atoi32(s.t, v)
	}
	if v, ok := args["partition-epoch"]; ok {
		p.PartitionEpoch = atoi32(s.t, v)
	}
	for _, r := range strings.Split(args["isr"], ",") {
		id := atoi32(s.t, r)
		p.NewISR = append(p.NewISR, id)
		m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		m.BrokerID, m.BrokerEpoch = id, s.brokerEpoch(id)
		if args["stale-member"] == r {
			m.BrokerEpoch = 999999
		}
		p.NewEpochISR = append(p.NewEpochISR, m)
	}
	return tp, p
}

func (s *scenario) storedState(tp TP) (metadata.LeaderAndIsr, bool) {
	st, found, err := metadata.New(s.store).ReadState(s.ctx, tp)
	return st, found && err == nil
}

func (s *scenario) brokerEpoch(id int32) int64 {
	brokers, _, err := metadata.New(s.store).Brokers(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, b := range brokers {
		if b.ID == id {
			return b.Epoch
		}
	}
	return -1
}

func (s *scenario) topicID(topic string) [16]byte {
	kv, found, err := s.store.Get(s.ctx, metadata.TopicKey(topic))
	if err != nil {
		s.t.Fatal(err)
	}
	if !found {
		return [16]byte{0xff}
	}
	a, err := metadata.DecodeAssignment(kv.Value)
	if err != nil {
		s.t.Fatal(err)
	}
	return a.TopicID
}

// The loop's entry point: an inactive controller answers NOT_CONTROLLER at
// once; the active one answers through its loop.
func TestLoopAlterPartition(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {2, 1}})
	st := cl.state("t", 0)
	brokers, _, err := metadata.New(cl.store).Brokers(cl.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var epoch2 int64
	for _, b := range brokers {
		if b.ID == 2 {
			epoch2 = b.Epoch
		}
	}
	newReq := func() *kmsg.AlterPartitionRequest {
		req := kmsg.NewPtrAlterPartitionRequest()
		req.Version, req.BrokerID, req.BrokerEpoch = 1, 2, epoch2
		rt := kmsg.NewAlterPartitionRequestTopic()
		rt.Topic = "t"
		p := kmsg.NewAlterPartitionRequestTopicPartition()
		p.Partition, p.LeaderEpoch, p.PartitionEpoch, p.NewISR = 0, st.LeaderEpoch, st.PartitionEpoch, []int32{2}
		rt.Partitions = append(rt.Partitions, p)
		req.Topics = append(req.Topics, rt)
		return req
	}

	inactive := NewLoop(cl.nodes[2].c)
	if r := inactive.AlterPartition(cl.ctx, newReq()); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("inactive controller answered %v", codeName(r.ErrorCode))
	}

	// Nobody runs this loop: the caller's context bounds the wait.
	idle := NewLoop(cl.nodes[1].c)
	if r := idle.AlterPartition(cl.endedContext(), newReq()); r.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("with its context ended: %v", codeName(r.ErrorCode))
	}

	l, wait := cl.runLoop(1)
	r := l.AlterPartition(wait, newReq())
	if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("response %+v", r)
	}
	if p := r.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.ISR) != 1 || p.ISR[0] != 2 || p.PartitionEpoch != st.PartitionEpoch+1 {
		t.Fatalf("partition answer %+v", p)
	}
	if got := cl.state("t", 0); len(got.ISR) != 1 || got.PartitionEpoch != st.PartitionEpoch+1 {
		t.Fatalf("stored state %+v", got)
	}
}

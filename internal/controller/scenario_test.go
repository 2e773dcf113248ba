package controller

// Scenario scripts in testdata/*.txt (cockroachdb/datadriven, as etcd-io/raft
// uses): each command drives the cluster harness one step and prints what
// the controllers did — state-change log lines, partition states in the
// store, requests sent per broker. A command is what happens to a cluster:
// a broker starts or dies, an admin writes a topic or a deletion marker, a
// broker sends a request. Whatever it writes to the store reaches the
// controllers as in production, through their loops' store watches
// (harness_test.go), and the step ends when every controller has acted on
// every change. Rewrite the expectations with
// `go test ./internal/controller -run TestScenarios -rewrite`.

import (
	"bytes"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var sc *scenario
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if sc == nil {
				sc = &scenario{cluster: newCluster(t)}
			}
			sc.t = t
			return sc.run(d)
		})
	})
}

type scenario struct {
	*cluster
	t       *testing.T
	log     bytes.Buffer // state-change log of every controller
	raced   []string     // writes bump-state made race the controller's (printed once they happened)
	pending []sent       // StopReplica(delete) requests not answered yet, with their sender in broker
	senders []int32      // who sent pending[i]
}

func (s *scenario) run(d *datadriven.TestData) string {
	s.log.Reset()
	var out strings.Builder
	if s.query(d, &out) {
		return out.String()
	}
	if !s.clusterCommand(d, &out) && !s.moreCommands(d, &out) {
		s.t.Fatalf("unknown command %q", d.Cmd)
	}
	s.settle()
	for _, r := range s.raced {
		out.WriteString(r + "\n")
	}
	s.raced = nil
	out.WriteString(s.stateChanges())
	out.WriteString(s.sentSummary())
	return out.String()
}

// query runs the commands that only read the store.
func (s *scenario) query(d *datadriven.TestData, out *strings.Builder) bool {
	switch d.Cmd {
	case "states": // states topic=t: the partition states as stored
		var topic string
		d.ScanArgs(s.t, "topic", &topic)
		out.WriteString(s.states(topic))
	case "controller": // who holds /controller, the epoch, and who believes to be active
		id, _, err := metadata.New(s.store).Controller(s.ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		fmt.Fprintf(out, "controller=%d epoch=%d believed active by %v\n", id, s.epoch(), s.active())
	case "gauges": // the active controller's gauges (Kafka's KafkaController metrics) and unclean elections so far
		c := s.nodes[s.activeID()].c
		var a gaugesAnswer
		c.Handle(s.ctx, gaugesEvent{reply: func(r gaugesAnswer) { a = r }})
		fmt.Fprintf(out, "%+v ok=%v unclean_elections=%d\n", a.g, a.ok, c.UncleanElections())
	default:
		return false
	}
	return true
}

// clusterCommand runs the commands of this file: what happens to brokers,
// topics and the store.
func (s *scenario) clusterCommand(d *datadriven.TestData, out *strings.Builder) bool {
	var id int
	var name string
	switch d.Cmd {
	case "start": // start ids=(1,2,3): register and campaign
		var ids []int
		d.ScanArgs(s.t, "ids", &ids)
		for _, id := range ids {
			s.startBroker(int32(id))
		}
	case "create-topic": // create-topic name=t, input "p: r1 r2 r3" lines
		d.ScanArgs(s.t, "name", &name)
		s.createTopic(name, parseAssignment(s.t, d.Input))
		for _, id := range s.ids() { // only the active controller acts; the others ignore it
			if len(s.nodes[id].sender.sentSoFar()) > 0 && !s.nodes[id].c.IsActive() {
				fmt.Fprintf(out, "inactive controller %d sent requests\n", id)
			}
		}
	case "kill": // kill id=n: its session ends
		d.ScanArgs(s.t, "id", &id)
		s.kill(int32(id))
	case "restart": // restart id=n: registers again
		d.ScanArgs(s.t, "id", &id)
		s.startBroker(int32(id))
	case "delete-topic": // delete-topic name=t: the DeleteTopics handler's marker
		d.ScanArgs(s.t, "name", &name)
		s.markForDeletion(name)
	case "answer-stop-replicas": // the brokers answer every StopReplica(delete) sent so far, successfully
		fmt.Fprintf(out, "answered %d\n", s.answerPending())
	case "transition": // transition partition=t-0 to=NonExistentPartition: ask the state machine directly
		s.transition(d, out)
	case "bump-state": // bump-state partition=t-0: someone else rewrites the state just before the active controller's next write (a version conflict ahead)
		s.bumpState(d)
	case "stall": // stall id=n: its session expires but its loop, paused, takes nothing; another takes over
		d.ScanArgs(s.t, "id", &id)
		n := s.nodes[int32(id)]
		n.stalled = true
		s.expire(n)
	case "wake": // wake id=n: the stalled loop takes every store change it missed
		d.ScanArgs(s.t, "id", &id)
		before := s.store.Revision()
		n := s.nodes[int32(id)]
		n.stalled = false
		s.deliver(int32(id))
		fmt.Fprintf(out, "active=%v store writes=%d\n", n.c.IsActive(), s.store.Revision()-before)
		n.sender.take()
	default:
		return false
	}
	return true
}

func (s *scenario) transition(d *datadriven.TestData, out *strings.Builder) {
	var part, to string
	d.ScanArgs(s.t, "partition", &part)
	d.ScanArgs(s.t, "to", &to)
	tp := parseTP(s.t, part)
	c := s.nodes[s.activeID()].c
	b := newBatch()
	target := map[string]PartitionState{"NewPartition": NewPartition, "OnlinePartition": OnlinePartition,
		"OfflinePartition": OfflinePartition, "NonExistentPartition": NonExistentPartition}[to]
	if err := c.changePartitions(s.ctx, b, []TP{tp}, target, OfflineElection); err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
	}
	c.send(b)
}

// bumpState arms the rewrite of a partition's state chunk (its own
// content again, a new version) before the active controller's next
// transaction.
func (s *scenario) bumpState(d *datadriven.TestData) {
	var part string
	d.ScanArgs(s.t, "partition", &part)
	tp := parseTP(s.t, part)
	key := metadata.StateChunkKey(tp.Topic, metadata.ChunkOf(tp.Partition))
	s.nodes[s.activeID()].client.beforeTxns(func() error {
		kv, found, err := s.store.Get(s.ctx, key)
		if err != nil || !found {
			s.t.Errorf("bump-state: %s: found=%v err=%v", key, found, err)
			return nil
		}
		if _, err := s.store.Txn(s.ctx, nil, []metastore.Op{metastore.Put(kv.Key, kv.Value)}); err != nil {
			s.t.Errorf("bump-state: %v", err)
		}
		s.raced = append(s.raced, "someone else rewrote "+key+" just before the controller's write")
		return nil
	})
}

// startBroker registers broker id, logging its state changes into s.log,
// and has it campaign.
func (s *scenario) startBroker(id int32) {
	n := s.start(id)
	n.c.cfg.StateChange = slog.New(slog.NewTextHandler(&s.log, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTime}))
	n.c.Handle(s.ctx, Startup{Session: n.sess})
}

// answerPending answers the pending StopReplica(delete) requests to the
// controllers that sent them (answers to a dead controller are lost).
func (s *scenario) answerPending() int {
	pending, senders := s.pending, s.senders
	s.pending, s.senders = nil, nil
	count := 0
	for i, sr := range pending {
		n := s.nodes[senders[i]]
		if n == nil {
			continue
		}
		req := sr.req.(*kmsg.StopReplicaRequest)
		resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
		for _, t := range req.Topics {
			for _, p := range t.PartitionStates {
				if p.Delete {
					rp := kmsg.NewStopReplicaResponsePartition()
					rp.Topic, rp.Partition = t.Topic, p.Partition
					resp.Partitions = append(resp.Partitions, rp)
					count++
				}
			}
		}
		n.c.Handle(s.ctx, response{broker: sr.broker, req: req, resp: resp})
	}
	return count
}

// dropTime leaves out the time, and the level of Debug lines (Kafka's
// per-partition TRACE lines): a line that shows a level is Info or above.
func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey || a.Key == slog.LevelKey && a.Value.Any() == slog.LevelDebug {
		return slog.Attr{}
	}
	return a
}

// targetArg is the controller a command goes to: its `to` argument, by
// default the active one.
func (s *scenario) targetArg(d *datadriven.TestData) int32 {
	to := -1
	d.MaybeScanArgs(s.t, "to", &to)
	if to < 0 {
		return s.activeID()
	}
	return int32(to)
}

// brokerEpochArg overrides *epoch with the broker-epoch argument when given.
func (s *scenario) brokerEpochArg(d *datadriven.TestData, epoch *int64) {
	if d.HasArg("broker-epoch") {
		var e int
		d.ScanArgs(s.t, "broker-epoch", &e)
		*epoch = int64(e)
	}
}

// oneReply fails the test unless exactly one reply came, and returns it.
func oneReply[T any](t *testing.T, replies []T) T {
	t.Helper()
	if len(replies) != 1 {
		t.Fatalf("%d replies", len(replies))
	}
	return replies[0]
}

func (s *scenario) activeID() int32 {
	if a := s.active(); len(a) == 1 {
		return a[0]
	}
	s.t.Fatalf("active controllers: %v", s.active())
	return -1
}

// stateChanges prints the state-change log lines of this step.
func (s *scenario) stateChanges() string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(s.log.String()), "\n") {
		if l != "" {
			b.WriteString("log: " + l + "\n")
		}
	}
	return b.String()
}

// sentSummary prints, per broker, the requests every controller sent in
// this step.
func (s *scenario) sentSummary() string {
	var lines []string
	for _, id := range s.ids() {
		for _, sr := range s.nodes[id].sender.take() {
			lines = append(lines, fmt.Sprintf("sent %d→%d %s", id, sr.broker, describe(sr.req)))
			if _, ok := sr.req.(*kmsg.StopReplicaRequest); ok {
				s.pending, s.senders = append(s.pending, sr), append(s.senders, id)
			}
		}
	}
	return strings.Join(lines, "\n") + map[bool]string{true: "\n", false: ""}[len(lines) > 0]
}

func describe(req kmsg.Request) string {
	var parts []string
	switch r := req.(type) {
	case *kmsg.LeaderAndISRRequest:
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				parts = append(parts, fmt.Sprintf("%s-%d:l%d/e%d/isr%v", t.Topic, p.Partition, p.Leader, p.LeaderEpoch, p.ISR))
			}
		}
		return fmt.Sprintf("LeaderAndIsr(epoch %d) %s", r.ControllerEpoch, strings.Join(parts, " "))
	case *kmsg.UpdateMetadataRequest:
		n, del := 0, 0
		for _, t := range r.TopicStates {
			for _, p := range t.PartitionStates {
				if p.Leader == kafka.LeaderDuringDelete {
					del++
				} else {
					n++
				}
			}
		}
		return fmt.Sprintf("UpdateMetadata(epoch %d) brokers=%d partitions=%d deleted=%d", r.ControllerEpoch, len(r.LiveBrokers), n, del)
	case *kmsg.StopReplicaRequest:
		for _, t := range r.Topics {
			for _, p := range t.PartitionStates {
				parts = append(parts, fmt.Sprintf("%s-%d:delete=%v", t.Topic, p.Partition, p.Delete))
			}
		}
		return fmt.Sprintf("StopReplica(epoch %d) %s", r.ControllerEpoch, strings.Join(parts, " "))
	}
	return kmsg.NameForKey(req.Key())
}

func (s *scenario) states(topic string) string {
	entries, _ := metadata.New(s.store).ReadStates(s.ctx, topic)
	var lines []string
	for _, e := range entries {
		p, st := e.Partition, e.State
		lines = append(lines, fmt.Sprintf("%s-%d leader=%d leader_epoch=%d isr=%v controller_epoch=%d partition_epoch=%d",
			topic, p, st.Leader, st.LeaderEpoch, st.ISR, st.ControllerEpoch, st.PartitionEpoch))
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return "no states\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

func parseAssignment(t *testing.T, input string) map[int32][]int32 {
	out := map[int32][]int32{}
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		p, rs, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("bad assignment line %q", line)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(p))
		for _, f := range strings.Fields(rs) {
			r, _ := strconv.Atoi(f)
			out[int32(pid)] = append(out[int32(pid)], int32(r))
		}
	}
	return out
}

func parseTP(t *testing.T, s string) TP {
	i := strings.LastIndex(s, "-")
	p, err := strconv.Atoi(s[i+1:])
	if i < 0 || err != nil {
		t.Fatalf("bad partition %q", s)
	}
	return TP{Topic: s[:i], Partition: int32(p)}
}

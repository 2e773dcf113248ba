package controller

// Scenario commands for replica leader elections
// (testdata/elect_leaders*.txt, testdata/auto_rebalance.txt), and the
// loop's entry point.
//
//	elect-leaders type=preferred|unclean [to=N] [all]
//	t-0
//	t-1
//
// sends one election to controller `to` (default: the active one) for the
// listed partitions (all: every partition of every topic) and prints each
// result and the number of store writes.
//
//	auto-rebalance percentage=P [to=N]
//
// prints the imbalance check's figures as the controller sees them, then
// hands the controller an AutoLeaderRebalance event and prints the store
// writes.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
)

func (s *scenario) electLeaders(d *datadriven.TestData, out *strings.Builder) {
	var typ string
	d.ScanArgs(s.t, "type", &typ)
	to := s.targetArg(d)
	et := map[string]ElectionType{"preferred": ElectPreferred, "unclean": ElectUnclean, "bogus": 7}[typ]
	var tps []TP
	if d.HasArg("all") {
		tps = s.nodes[s.activeID()].c.ctx.allPartitions()
	}
	for _, line := range strings.Fields(d.Input) {
		tps = append(tps, parseTP(s.t, line))
	}
	before := s.store.Revision()
	var replies [][]ElectionResult
	s.handle(to, ElectLeaders{Type: et, Partitions: tps, Reply: func(r []ElectionResult) { replies = append(replies, r) }})
	for _, r := range oneReply(s.t, replies) {
		fmt.Fprintf(out, "%s-%d: %s", r.TP.Topic, r.TP.Partition, codeName(r.Code))
		if r.Code == 0 {
			fmt.Fprintf(out, " leader=%d", r.Leader)
		}
		if r.Message != "" {
			fmt.Fprintf(out, " (%s)", r.Message)
		}
		out.WriteString("\n")
	}
	fmt.Fprintf(out, "store writes=%d\n", s.store.Revision()-before)
}

func (s *scenario) autoRebalance(d *datadriven.TestData, out *strings.Builder) {
	var pct int
	d.ScanArgs(s.t, "percentage", &pct)
	to := s.targetArg(d)
	c := s.nodes[to].c
	c.cfg.LeaderImbalancePercentage = int32(pct)
	if c.ctx != nil {
		brokers, elect := planRebalance(c.leaderships(), c.electable, int32(pct), len(c.ctx.reassigningPartitions()) > 0)
		for _, b := range brokers {
			fmt.Fprintf(out, "broker %d: %d/%d not led by it, over=%v\n", b.Broker, b.NotLed, b.Preferred, b.Over)
		}
		fmt.Fprintf(out, "to elect: %v\n", elect)
	}
	before := s.store.Revision()
	s.handle(to, AutoLeaderRebalance{})
	fmt.Fprintf(out, "store writes=%d\n", s.store.Revision()-before)
}

// The loop's entry point: an inactive controller answers NOT_CONTROLLER at
// once (each distinct partition once, sorted), a caller whose context ends
// first REQUEST_TIMED_OUT; the active one answers through its loop.
func TestLoopElectLeaders(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {2, 1}, 1: {1, 2}})
	tps := []TP{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}

	r := NewLoop(cl.nodes[2].c).ElectLeaders(cl.ctx, ElectPreferred, tps)
	if len(r) != 2 || r[0].TP.Partition != 0 || r[0].Code != kerr.NotController.Code || r[1].Code != kerr.NotController.Code {
		t.Fatalf("inactive controller answered %+v", r)
	}

	idle := NewLoop(cl.nodes[1].c) // nobody runs it
	if r := idle.ElectLeaders(cl.endedContext(), ElectPreferred, tps); len(r) != 2 || r[0].Code != kerr.RequestTimedOut.Code {
		t.Fatalf("with its context ended: %+v", r)
	}

	l, wait := cl.runLoop(1)
	r = l.ElectLeaders(wait, ElectPreferred, tps)
	if len(r) != 2 || r[0].Code != kerr.ElectionNotNeeded.Code || r[1].Code != kerr.ElectionNotNeeded.Code {
		t.Fatalf("active controller answered %+v", r)
	}
}

package controller

// Scenario command for controlled shutdown (testdata/controlled_shutdown*.txt),
// and the loop's entry point.
//
//	controlled-shutdown broker=3 [to=1] [version=3] [broker-epoch=N]
//
// sends one ControlledShutdown request for broker `broker` to controller
// `to` (default: the active one) and prints the answer, the number of store
// writes and the shutting-down set; the broker epoch defaults to the
// registration's.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *scenario) controlledShutdown(d *datadriven.TestData, out *strings.Builder) {
	var broker int
	version := 3
	d.ScanArgs(s.t, "broker", &broker)
	to := s.targetArg(d)
	d.MaybeScanArgs(s.t, "version", &version)
	req := kmsg.NewPtrControlledShutdownRequest()
	req.Version, req.BrokerID = int16(version), int32(broker)
	if version >= 2 {
		req.BrokerEpoch = s.brokerEpoch(int32(broker))
	}
	s.brokerEpochArg(d, &req.BrokerEpoch)
	before := s.store.Revision()
	var replies []*kmsg.ControlledShutdownResponse
	n := s.nodes[to]
	n.c.Handle(s.ctx, ControlledShutdown{Req: req, Reply: func(r *kmsg.ControlledShutdownResponse) { replies = append(replies, r) }})
	resp := oneReply(s.t, replies)
	var remaining []string
	for _, p := range resp.PartitionsRemaining {
		remaining = append(remaining, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
	}
	fmt.Fprintf(out, "response error=%s remaining=%v\n", codeName(resp.ErrorCode), remaining)
	fmt.Fprintf(out, "store writes=%d shutting down=%v\n", s.store.Revision()-before, sortedIDs(n.c.shutting))
}

// The loop's entry point: an inactive controller answers NOT_CONTROLLER at
// once; the active one answers through its loop, after moving leadership.
func TestLoopControlledShutdown(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {2, 1}, 1: {1, 2}})
	req := kmsg.NewPtrControlledShutdownRequest()
	req.Version, req.BrokerID = 3, 2
	req.BrokerEpoch = -1

	inactive := NewLoop(cl.nodes[2].c)
	if r := inactive.ControlledShutdown(cl.ctx, req); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("inactive controller answered %v", codeName(r.ErrorCode))
	}

	// Nobody runs this loop: the caller's context bounds the wait.
	idle := NewLoop(cl.nodes[1].c)
	if r := idle.ControlledShutdown(cl.endedContext(), req); r.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("with its context ended: %v", codeName(r.ErrorCode))
	}

	l, wait := cl.runLoop(1)
	r := l.ControlledShutdown(wait, req)
	if r.ErrorCode != 0 || len(r.PartitionsRemaining) != 0 {
		t.Fatalf("response %+v", r)
	}
	if st := cl.state("t", 0); st.Leader != 1 || len(st.ISR) != 1 || st.ISR[0] != 1 {
		t.Fatalf("t-0 after broker 2's controlled shutdown: %+v", st)
	}
	if st := cl.state("t", 1); st.Leader != 1 || len(st.ISR) != 1 || st.ISR[0] != 1 {
		t.Fatalf("t-1 after broker 2's controlled shutdown: %+v", st)
	}
}

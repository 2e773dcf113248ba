package alterpartition

import (
	"context"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// fakeController is a TCP server answering AlterPartition: by default it
// accepts every change (partition epoch + 1); answer overrides that per
// request (n counts from 0).
type fakeController struct {
	srv    *server.Server
	answer func(n int, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse

	mu   sync.Mutex
	reqs []*kmsg.AlterPartitionRequest
}

func startController(t *testing.T) *fakeController {
	t.Helper()
	f := &fakeController{}
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Handler: f})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *fakeController) addr() string { return f.srv.Addr().String() }

func (f *fakeController) Handle(_ context.Context, _ *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return wire.ApiVersionsResponse(hdr.Version, 0), nil
	case *kmsg.AlterPartitionRequest:
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, r)
		f.mu.Unlock()
		if f.answer != nil {
			if resp := f.answer(n, r); resp != nil {
				return resp, nil
			}
		}
		return accept(r, nil), nil
	}
	return nil, nil
}

func (f *fakeController) requests() []*kmsg.AlterPartitionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// accept answers every partition of req as written, except those codes
// names (an error) and those skip leaves out.
func accept(req *kmsg.AlterPartitionRequest, codes map[int32]int16, skip ...int32) *kmsg.AlterPartitionResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.Topic, rt.TopidID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			if slices.Contains(skip, p.Partition) {
				continue
			}
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = p.Partition
			if code := codes[p.Partition]; code != 0 {
				rp.ErrorCode = code
			} else {
				rp.LeaderID, rp.LeaderEpoch, rp.PartitionEpoch, rp.ISR = req.BrokerID, p.LeaderEpoch, p.PartitionEpoch+1, p.NewISR
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// target is where the manager believes the controller is ("" unknown).
type target struct{ addr atomic.Value }

func (t *target) set(addr string) { t.addr.Store(addr) }
func (t *target) get() (int32, string, bool) {
	a, _ := t.addr.Load().(string)
	return 1, a, a != ""
}

func newManager(t *testing.T, tg *target) *Manager {
	m := New(Config{NodeID: 7, BrokerEpoch: func() int64 { return 42 }, Controller: tg.get,
		Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	t.Cleanup(m.Close)
	return m
}

// results collects done calls.
type results chan struct {
	tp kafka.TopicPartition
	r  Result
}

func (rs results) done(tp kafka.TopicPartition) func(Result) {
	return func(r Result) {
		rs <- struct {
			tp kafka.TopicPartition
			r  Result
		}{tp, r}
	}
}

func (rs results) wait(t *testing.T, n int) map[kafka.TopicPartition]Result {
	t.Helper()
	out := map[kafka.TopicPartition]Result{}
	for range n {
		select {
		case got := <-rs:
			if _, dup := out[got.tp]; dup {
				t.Fatalf("%v answered twice", got.tp)
			}
			out[got.tp] = got.r
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d results", len(out), n)
		}
	}
	return out
}

func tp(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}

func id(b byte) [16]byte { return [16]byte{b} }

// Items queued while no controller is known go in one request (version 2:
// they all have topic ids), grouped by topic, with this broker's id and
// epoch; each partition gets its own answer.
func TestBatchesQueuedItems(t *testing.T) {
	fc := startController(t)
	var tg target
	m := newManager(t, &tg)
	rs := make(results, 8)
	m.Submit(Item{TP: tp("a", 0), TopicID: id(1), LeaderEpoch: 3, PartitionEpoch: 5, NewISR: []int32{7, 8}}, rs.done(tp("a", 0)))
	m.Submit(Item{TP: tp("a", 1), TopicID: id(1), LeaderEpoch: 3, PartitionEpoch: 9, NewISR: []int32{7}}, rs.done(tp("a", 1)))
	m.Submit(Item{TP: tp("b", 0), TopicID: id(2), LeaderEpoch: 1, PartitionEpoch: 0, NewISR: []int32{7, 9}}, rs.done(tp("b", 0)))
	tg.set(fc.addr())
	got := rs.wait(t, 3)
	if r := got[tp("a", 1)]; r.ErrorCode != 0 || r.PartitionEpoch != 10 || r.LeaderEpoch != 3 || r.Leader != 7 || !slices.Equal(r.ISR, []int32{7}) {
		t.Fatalf("a-1: %+v", r)
	}
	if r := got[tp("b", 0)]; r.PartitionEpoch != 1 || !slices.Equal(r.ISR, []int32{7, 9}) {
		t.Fatalf("b-0: %+v", r)
	}
	reqs := fc.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Version != 2 || r.BrokerID != 7 || r.BrokerEpoch != 42 || len(r.Topics) != 2 ||
		r.Topics[0].TopicID != id(1) || len(r.Topics[0].Partitions) != 2 || r.Topics[1].TopicID != id(2) {
		t.Fatalf("request %+v", r)
	}
}

// A second item for a partition with one outstanding waits behind it and
// goes in the request after its answer; a third replaces the waiting one,
// which is answered OPERATION_NOT_ATTEMPTED at once. (A leader's first
// proposal at a new epoch behind an unanswered one of the old epoch: it
// must not be refused and left for a later fetch of the partition.)
func TestSecondItemWaitsBehindOutstanding(t *testing.T) {
	fc := startController(t)
	fc.answer = func(n int, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
		if n == 0 {
			return accept(req, map[int32]int16{0: kerr.FencedLeaderEpoch.Code})
		}
		return nil
	}
	var tg target
	m := newManager(t, &tg)
	rs := make(results, 4)
	m.Submit(Item{TP: tp("a", 0), TopicID: id(1), LeaderEpoch: 3, PartitionEpoch: 1, NewISR: []int32{7}}, rs.done(tp("a", 0)))
	var replaced []Result
	m.Submit(Item{TP: tp("a", 0), TopicID: id(1), LeaderEpoch: 4, PartitionEpoch: 2, NewISR: []int32{7, 8}},
		func(r Result) { replaced = append(replaced, r) })
	if len(replaced) != 0 {
		t.Fatalf("second item answered at once: %+v", replaced)
	}
	m.Submit(Item{TP: tp("a", 0), TopicID: id(1), LeaderEpoch: 5, PartitionEpoch: 2, NewISR: []int32{7, 8}}, rs.done(tp("a", 0)))
	if len(replaced) != 1 || replaced[0].ErrorCode != kerr.OperationNotAttempted.Code {
		t.Fatalf("replaced item answered %+v, want OPERATION_NOT_ATTEMPTED once", replaced)
	}
	tg.set(fc.addr())
	if r := rs.wait(t, 1)[tp("a", 0)]; r.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("first item: %+v", r)
	}
	if r := rs.wait(t, 1)[tp("a", 0)]; r.ErrorCode != 0 || r.LeaderEpoch != 5 || r.PartitionEpoch != 3 || !slices.Equal(r.ISR, []int32{7, 8}) {
		t.Fatalf("waiting item: %+v", r)
	}
	reqs := fc.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range []int32{3, 5} {
		if ps := reqs[i].Topics[0].Partitions; len(reqs[i].Topics) != 1 || len(ps) != 1 || ps[0].LeaderEpoch != want {
			t.Fatalf("request %d: %+v, want the item of leader epoch %d alone", i, reqs[i], want)
		}
	}
	m.Submit(Item{TP: tp("a", 0), TopicID: id(1), LeaderEpoch: 5, PartitionEpoch: 3, NewISR: []int32{7}}, rs.done(tp("a", 0)))
	if r := rs.wait(t, 1)[tp("a", 0)]; r.ErrorCode != 0 || r.PartitionEpoch != 4 {
		t.Fatalf("next item: %+v", r)
	}
}

// NOT_CONTROLLER for the whole request: the items stay queued and are sent
// again.
func TestRetriesNotController(t *testing.T) {
	fc := startController(t)
	fc.answer = func(n int, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
		if n == 0 {
			resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
			resp.ErrorCode = kerr.NotController.Code
			return resp
		}
		return nil
	}
	var tg target
	tg.set(fc.addr())
	m := newManager(t, &tg)
	rs := make(results, 1)
	m.Submit(Item{TP: tp("a", 0), TopicID: id(1), PartitionEpoch: 4, NewISR: []int32{7}}, rs.done(tp("a", 0)))
	if r := rs.wait(t, 1)[tp("a", 0)]; r.ErrorCode != 0 || r.PartitionEpoch != 5 {
		t.Fatalf("result %+v", r)
	}
	if reqs := fc.requests(); len(reqs) != 2 || len(reqs[1].Topics) != 1 || reqs[1].Topics[0].Partitions[0].PartitionEpoch != 4 {
		t.Fatalf("requests %+v", reqs)
	}
}

// Each partition gets its own outcome; one left out of the answer is sent
// again, alone.
func TestPerPartitionResults(t *testing.T) {
	fc := startController(t)
	fc.answer = func(n int, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
		if n == 0 {
			return accept(req, map[int32]int16{0: kerr.FencedLeaderEpoch.Code}, 2)
		}
		return nil
	}
	var tg target
	m := newManager(t, &tg)
	rs := make(results, 3)
	for p := range int32(3) {
		m.Submit(Item{TP: tp("a", p), TopicID: id(1), NewISR: []int32{7}}, rs.done(tp("a", p)))
	}
	tg.set(fc.addr())
	got := rs.wait(t, 3)
	if got[tp("a", 0)].ErrorCode != kerr.FencedLeaderEpoch.Code || got[tp("a", 1)].ErrorCode != 0 || got[tp("a", 2)].ErrorCode != 0 {
		t.Fatalf("results %+v", got)
	}
	reqs := fc.requests()
	if len(reqs) != 2 || len(reqs[1].Topics[0].Partitions) != 1 || reqs[1].Topics[0].Partitions[0].Partition != 2 {
		t.Fatalf("requests %+v", reqs)
	}
}

// The controller is unreachable, then moves: the old one answers
// NOT_CONTROLLER and the broker learns the new address, where the item
// goes (version 1 by name: it has no topic id).
func TestControllerMoves(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	oldC, newC := startController(t), startController(t)
	var tg target
	var attempts atomic.Int32
	oldC.answer = func(int, *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
		tg.set(newC.addr())
		return &kmsg.AlterPartitionResponse{ErrorCode: kerr.NotController.Code}
	}
	m := New(Config{NodeID: 7, BrokerEpoch: func() int64 { return 42 }, Backoff: time.Millisecond,
		Controller: func() (int32, string, bool) {
			if attempts.Add(1) == 1 {
				return 1, dead, true // connection refused
			}
			return tg.get()
		}})
	t.Cleanup(m.Close)
	tg.set(oldC.addr())
	rs := make(results, 1)
	m.Submit(Item{TP: tp("a", 3), NewISR: []int32{7}}, rs.done(tp("a", 3)))
	if r := rs.wait(t, 1)[tp("a", 3)]; r.ErrorCode != 0 || r.PartitionEpoch != 1 {
		t.Fatalf("result %+v", r)
	}
	if n := len(oldC.requests()); n != 1 {
		t.Fatalf("old controller got %d requests", n)
	}
	reqs := newC.requests()
	if len(reqs) != 1 || reqs[0].Version != 1 || reqs[0].Topics[0].Topic != "a" {
		t.Fatalf("new controller got %+v", reqs)
	}
}

// Close answers what is outstanding, what waits behind it, and every later
// Submit.
func TestCloseAnswersOutstanding(t *testing.T) {
	var tg target
	m := New(Config{NodeID: 7, Controller: tg.get, Backoff: time.Millisecond})
	var got []Result
	m.Submit(Item{TP: tp("a", 0), NewISR: []int32{7}}, func(r Result) { got = append(got, r) })
	m.Submit(Item{TP: tp("a", 0), NewISR: []int32{7, 8}}, func(r Result) { got = append(got, r) })
	m.Close()
	m.Submit(Item{TP: tp("a", 1), NewISR: []int32{7}}, func(r Result) { got = append(got, r) })
	if len(got) != 3 {
		t.Fatalf("results %+v, want 3", got)
	}
	for _, r := range got {
		if r.ErrorCode != kerr.OperationNotAttempted.Code {
			t.Fatalf("results %+v", got)
		}
	}
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// standIn is a broker that answers the controller's inter-broker requests
// (ApiVersions, LeaderAndIsr, UpdateMetadata, StopReplica) with empty
// successes and hosts no logs. It records, per controller epoch, when the
// first UpdateMetadata of that epoch arrived — stamped when its last byte
// was read, before decoding, so that the figure is the controller's "sent"
// and not this stand-in's parsing — and how many partitions it carried.
// Its goroutines end with close.
type standIn struct {
	id int32
	ln net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]bool
	want    int                 // partitions in the cluster
	firstUM map[int32]umArrival // controller epoch → first UpdateMetadata
	fullUM  map[int32]umArrival // controller epoch → first one carrying every partition
	notify  chan<- struct{}     // signalled (non-blocking) on every arrival

	// Leaders as UpdateMetadata told them, by topic then partition (as the
	// broker's metadata cache keeps them: one name lookup per topic), and
	// the crash watch: the partitions the victim led, not yet shown with
	// another leader.
	leaders  map[string][]int32
	victim   int32
	pending  map[string][]bool
	pendingN int
	moved    umArrival // when pendingN reached 0 (zero: not yet)
}

type umArrival struct {
	at         time.Time
	partitions int
}

func startStandIn(id int32, notify chan<- struct{}) (*standIn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("stand-in %d: %w", id, err)
	}
	s := &standIn{id: id, ln: ln, conns: map[net.Conn]bool{}, firstUM: map[int32]umArrival{}, fullUM: map[int32]umArrival{}, notify: notify,
		leaders: map[string][]int32{}, victim: -1}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *standIn) port() int32 { return int32(s.ln.Addr().(*net.TCPAddr).Port) }

func (s *standIn) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *standIn) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

// serve answers one connection's requests in order.
func (s *standIn) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	r := bufio.NewReaderSize(c, 1<<20)
	for {
		frame, err := wire.ReadFrame(r, 1<<30)
		if err != nil {
			return
		}
		at := time.Now()
		hdr, req, err := wire.ParseRequest(frame)
		if errors.Is(err, wire.ErrUnsupportedVersion) && hdr.Key == int16(kmsg.ApiVersions) {
			// As Kafka: a v0 body with UNSUPPORTED_VERSION; the client retries lower.
			hdr.Version = 0
			if _, err := c.Write(wire.AppendResponse(nil, hdr, wire.ApiVersionsResponse(0, 35))); err != nil {
				return
			}
			continue
		}
		if err != nil {
			return
		}
		resp, err := s.respond(hdr, req, at)
		if err != nil {
			return
		}
		if _, err := c.Write(wire.AppendResponse(nil, hdr, resp)); err != nil {
			return
		}
	}
}

// Handle answers one request as the stand-in does (tests).
func (s *standIn) Handle(_ context.Context, _ *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	return s.respond(hdr, req, time.Now())
}

func (s *standIn) respond(hdr wire.RequestHeader, req kmsg.Request, at time.Time) (kmsg.Response, error) {
	var resp kmsg.Response
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return wire.ApiVersionsResponse(hdr.Version, 0), nil
	case *kmsg.LeaderAndISRRequest:
		resp = kmsg.NewPtrLeaderAndISRResponse()
	case *kmsg.StopReplicaRequest:
		resp = kmsg.NewPtrStopReplicaResponse()
	case *kmsg.UpdateMetadataRequest:
		s.recordUM(r, at)
		resp = kmsg.NewPtrUpdateMetadataResponse()
	default:
		return nil, fmt.Errorf("stand-in %d: %s not served", s.id, kmsg.NameForKey(hdr.Key))
	}
	resp.SetVersion(hdr.Version)
	return resp, nil
}

func (s *standIn) recordUM(r *kmsg.UpdateMetadataRequest, at time.Time) {
	n := 0
	for _, t := range r.TopicStates {
		n += len(t.PartitionStates)
	}
	s.mu.Lock()
	if s.leaders == nil {
		s.leaders = map[string][]int32{}
	}
	for _, t := range r.TopicStates {
		ls := s.leaders[t.Topic]
		pend := s.pending[t.Topic]
		for _, p := range t.PartitionStates {
			if int(p.Partition) >= len(ls) {
				ls = append(ls, make([]int32, int(p.Partition)+1-len(ls))...)
			}
			ls[p.Partition] = p.Leader
			if int(p.Partition) < len(pend) && pend[p.Partition] && p.Leader >= 0 && p.Leader != s.victim {
				pend[p.Partition] = false
				s.pendingN--
				if s.pendingN == 0 {
					s.moved = umArrival{at: at, partitions: n}
				}
			}
		}
		s.leaders[t.Topic] = ls
	}
	if _, seen := s.firstUM[r.ControllerEpoch]; !seen {
		s.firstUM[r.ControllerEpoch] = umArrival{at: at, partitions: n}
	}
	if _, seen := s.fullUM[r.ControllerEpoch]; !seen && n >= s.want {
		s.fullUM[r.ControllerEpoch] = umArrival{at: at, partitions: n}
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// arrival reports the first UpdateMetadata of epoch (full: the first one
// carrying every partition), if any.
func (s *standIn) arrival(epoch int32, full bool) (umArrival, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.firstUM
	if full {
		m = s.fullUM
	}
	a, ok := m[epoch]
	return a, ok
}

// waitUM waits until every stand-in of ids got an UpdateMetadata of epoch
// and returns the latest of those arrivals.
func waitUM(ctx context.Context, notify <-chan struct{}, standIns []*standIn, epoch int32, full bool) (umArrival, error) {
	for {
		var last umArrival
		all := true
		for _, s := range standIns {
			a, ok := s.arrival(epoch, full)
			if !ok {
				all = false
				break
			}
			if a.at.After(last.at) {
				last.at = a.at
			}
			last.partitions = max(last.partitions, a.partitions)
		}
		if all {
			return last, nil
		}
		select {
		case <-notify:
		case <-ctx.Done():
			return umArrival{}, fmt.Errorf("waiting for UpdateMetadata with controller epoch %d: %w", epoch, ctx.Err())
		}
	}
}

// watchCrash starts watching for new leaders of every partition victim
// leads now; it returns how many those are.
func (s *standIn) watchCrash(victim int32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.victim, s.pending, s.pendingN, s.moved = victim, map[string][]bool{}, 0, umArrival{}
	for t, ls := range s.leaders {
		for p, l := range ls {
			if l == victim {
				if s.pending[t] == nil {
					s.pending[t] = make([]bool, len(ls))
				}
				s.pending[t][p] = true
				s.pendingN++
			}
		}
	}
	return s.pendingN
}

// crashHandled reports when every partition the victim led was shown with
// another leader.
func (s *standIn) crashHandled() (umArrival, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.moved, !s.moved.at.IsZero()
}

package main

import (
	"context"
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
// first UpdateMetadata of that epoch arrived and how many partitions it
// carried. Its server's goroutines end with close.
type standIn struct {
	id  int32
	srv *server.Server

	mu      sync.Mutex
	firstUM map[int32]umArrival // controller epoch → first UpdateMetadata
	notify  chan<- struct{}     // signalled (non-blocking) on every arrival
}

type umArrival struct {
	at         time.Time
	partitions int
}

func startStandIn(id int32, notify chan<- struct{}) (*standIn, error) {
	s := &standIn{id: id, firstUM: map[int32]umArrival{}, notify: notify}
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Handler: s})
	if err != nil {
		return nil, fmt.Errorf("stand-in %d: %w", id, err)
	}
	s.srv = srv
	go srv.Serve()
	return s, nil
}

func (s *standIn) port() int32 { return int32(s.srv.Addr().(*net.TCPAddr).Port) }

func (s *standIn) close() { s.srv.Close() }

// Handle implements server.Handler.
func (s *standIn) Handle(_ context.Context, _ *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return wire.ApiVersionsResponse(hdr.Version, 0), nil
	case *kmsg.LeaderAndISRRequest:
		return kmsg.NewPtrLeaderAndISRResponse(), nil
	case *kmsg.StopReplicaRequest:
		return kmsg.NewPtrStopReplicaResponse(), nil
	case *kmsg.UpdateMetadataRequest:
		s.recordUM(r)
		return kmsg.NewPtrUpdateMetadataResponse(), nil
	}
	return nil, fmt.Errorf("stand-in %d: %s not served", s.id, kmsg.NameForKey(hdr.Key))
}

func (s *standIn) recordUM(r *kmsg.UpdateMetadataRequest) {
	now := time.Now()
	n := 0
	for _, t := range r.TopicStates {
		n += len(t.PartitionStates)
	}
	s.mu.Lock()
	if _, seen := s.firstUM[r.ControllerEpoch]; !seen {
		s.firstUM[r.ControllerEpoch] = umArrival{at: now, partitions: n}
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// arrival reports the first UpdateMetadata of epoch, if any.
func (s *standIn) arrival(epoch int32) (umArrival, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.firstUM[epoch]
	return a, ok
}

// waitUM waits until every stand-in of ids got an UpdateMetadata of epoch
// and returns the latest of those arrivals.
func waitUM(ctx context.Context, notify <-chan struct{}, standIns []*standIn, epoch int32) (umArrival, error) {
	for {
		var last umArrival
		all := true
		for _, s := range standIns {
			a, ok := s.arrival(epoch)
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

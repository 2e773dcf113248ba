package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// peer serves one connection with answer (nil response: close the
// connection; a non-nil raw frame is written as it is instead).
type peer struct {
	ln   net.Listener
	seen chan RequestHeader
}

func startPeer(t testing.TB, answer func(hdr RequestHeader, req kmsg.Request) (kmsg.Response, []byte)) *peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{ln: ln, seen: make(chan RequestHeader, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			frame, err := ReadFrame(r, 1<<30)
			if err != nil {
				return
			}
			hdr, req, err := ParseRequest(frame)
			if err != nil {
				return
			}
			select {
			case p.seen <- hdr:
			default: // a benchmark's many requests: nobody looks at them
			}
			resp, raw := answer(hdr, req)
			switch {
			case raw != nil:
				c.Write(raw)
			case resp == nil:
				return
			default:
				resp.SetVersion(hdr.Version)
				c.Write(AppendResponse(nil, hdr, resp))
			}
		}
	}()
	return p
}

func dialPeer(t testing.TB, ctx context.Context, p *peer) *Conn {
	t.Helper()
	c, err := Dial(ctx, p.ln.Addr().String(), "test-client", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestConnRoundTrips(t *testing.T) {
	p := startPeer(t, func(hdr RequestHeader, req kmsg.Request) (kmsg.Response, []byte) {
		switch r := req.(type) {
		case *kmsg.LeaderAndISRRequest:
			resp := kmsg.NewPtrLeaderAndISRResponse()
			for _, ts := range r.TopicStates {
				rt := kmsg.NewLeaderAndISRResponseTopic()
				rt.TopicID = ts.TopicID
				for _, ps := range ts.PartitionStates {
					rp := kmsg.NewLeaderAndISRResponseTopicPartition()
					rp.Partition, rp.ErrorCode = ps.Partition, int16(ps.Partition)
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		case *kmsg.UpdateMetadataRequest:
			resp := kmsg.NewPtrUpdateMetadataResponse()
			resp.ErrorCode = 7
			return resp, nil
		case *kmsg.ApiVersionsRequest:
			return ApiVersionsResponse(hdr.Version, 0), nil
		}
		return nil, nil
	})
	c := dialPeer(t, context.Background(), p)

	lisr := kmsg.NewPtrLeaderAndISRRequest()
	lisr.Version = 5 // flexible, as the controller sends it
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic, ts.TopicID = "orders", [16]byte{1, 2, 3}
	for i := range int32(3) {
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition, ps.Replicas, ps.ISR = i, []int32{1, 2}, []int32{1, 2}
		ts.PartitionStates = append(ts.PartitionStates, ps)
	}
	lisr.TopicStates = append(lisr.TopicStates, ts)
	lresp := kmsg.NewPtrLeaderAndISRResponse()
	if err := c.RoundTrip(lisr, lresp, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(lresp.Topics) != 1 || lresp.Topics[0].TopicID != ts.TopicID || len(lresp.Topics[0].Partitions) != 3 ||
		lresp.Topics[0].Partitions[2].Partition != 2 || lresp.Topics[0].Partitions[2].ErrorCode != 2 {
		t.Fatalf("LeaderAndIsr response: %+v", lresp.Topics)
	}

	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = 8
	uresp := kmsg.NewPtrUpdateMetadataResponse()
	if err := c.RoundTrip(um, uresp, 5*time.Second); err != nil || uresp.ErrorCode != 7 {
		t.Fatalf("UpdateMetadata: %+v %v", uresp, err)
	}

	// ApiVersions v3 is flexible but answered with response header v0.
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	aresp := kmsg.NewPtrApiVersionsResponse()
	if err := c.RoundTrip(av, aresp, 5*time.Second); err != nil || len(aresp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions: %+v %v", aresp, err)
	}

	var corr []int32
	for range 3 {
		h := <-p.seen
		corr = append(corr, h.CorrelationID)
		if h.ClientID == nil || *h.ClientID != "test-client" {
			t.Fatalf("client id %v", h.ClientID)
		}
	}
	if corr[0] != 1 || corr[1] != 2 || corr[2] != 3 {
		t.Fatalf("correlation ids %v, want 1 2 3", corr)
	}
}

// Pipelined: requests sent before any answer is read are answered in
// order, each Receive decoding the oldest unanswered one's answer.
func TestConnPipelines(t *testing.T) {
	p := startPeer(t, func(hdr RequestHeader, req kmsg.Request) (kmsg.Response, []byte) {
		resp := kmsg.NewPtrUpdateMetadataResponse()
		resp.ErrorCode = int16(req.(*kmsg.UpdateMetadataRequest).ControllerEpoch)
		return resp, nil
	})
	c := dialPeer(t, context.Background(), p)
	var reqs []*kmsg.UpdateMetadataRequest
	for e := range int32(5) {
		req := kmsg.NewPtrUpdateMetadataRequest()
		req.Version, req.ControllerEpoch = 8, 10+e
		if err := c.Send(req, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, req)
	}
	for i := range 5 {
		select {
		case hdr := <-p.seen:
			if hdr.CorrelationID != int32(i+1) {
				t.Fatalf("request %d went out with correlation id %d", i, hdr.CorrelationID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d never reached the peer", i)
		}
	}
	for _, req := range reqs {
		resp := kmsg.NewPtrUpdateMetadataResponse()
		if err := c.Receive(req, resp, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != int16(req.ControllerEpoch) {
			t.Fatalf("answer %d read for the request of epoch %d", resp.ErrorCode, req.ControllerEpoch)
		}
	}
}

// TestConnReadsBackToBackFrames: responses that arrive together, small and
// large (beyond the read buffer, and beyond what a Conn keeps), are each
// decoded whole and in order: the bytes read past a frame are the next
// one's start.
func TestConnReadsBackToBackFrames(t *testing.T) {
	sizes := []int{100, 100 << 10, keptBufferBytes + 1<<20, 10, 70 << 10, 0}
	var all []byte
	p := startPeer(t, func(hdr RequestHeader, _ kmsg.Request) (kmsg.Response, []byte) {
		if hdr.CorrelationID != 1 {
			return nil, []byte{} // answered already, with the first
		}
		for i, n := range sizes {
			resp := kmsg.NewPtrFetchResponse()
			resp.SetVersion(hdr.Version)
			tp := kmsg.NewFetchResponseTopic()
			pp := kmsg.NewFetchResponseTopicPartition()
			pp.RecordBatches = bytes.Repeat([]byte{byte('a' + i)}, n)
			tp.Partitions = append(tp.Partitions, pp)
			resp.Topics = append(resp.Topics, tp)
			all = AppendResponse(all, RequestHeader{Key: hdr.Key, Version: hdr.Version, CorrelationID: int32(i + 1)}, resp)
		}
		return nil, all
	})
	c := dialPeer(t, context.Background(), p)
	var reqs []*kmsg.FetchRequest
	for range sizes {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(12)
		if err := c.Send(req, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, req)
	}
	for i, req := range reqs {
		resp := kmsg.NewPtrFetchResponse()
		if err := c.Receive(req, resp, 30*time.Second); err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		got := resp.Topics[0].Partitions[0].RecordBatches
		if want := bytes.Repeat([]byte{byte('a' + i)}, sizes[i]); !bytes.Equal(got, want) {
			t.Fatalf("response %d: %d record bytes, want %d of %q", i, len(got), sizes[i], rune('a'+i))
		}
	}
}

func TestConnRefusesBadResponses(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  func(hdr RequestHeader) []byte
		want string
	}{
		{"wrong correlation id", func(hdr RequestHeader) []byte {
			hdr.CorrelationID++
			resp := kmsg.NewPtrUpdateMetadataResponse()
			resp.SetVersion(hdr.Version)
			return AppendResponse(nil, hdr, resp)
		}, "correlation id"},
		{"oversized frame", func(RequestHeader) []byte {
			return binary.BigEndian.AppendUint32(nil, MaxResponseBytes+1)
		}, "bytes"},
		{"undecodable body", func(hdr RequestHeader) []byte {
			b := binary.BigEndian.AppendUint32(nil, 6)
			b = binary.BigEndian.AppendUint32(b, uint32(hdr.CorrelationID))
			return append(b, 0, 0) // tag section, then a body cut short
		}, "decoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPeer(t, func(hdr RequestHeader, _ kmsg.Request) (kmsg.Response, []byte) { return nil, tc.raw(hdr) })
			c := dialPeer(t, context.Background(), p)
			um := kmsg.NewPtrUpdateMetadataRequest()
			um.Version = 8
			err := c.RoundTrip(um, kmsg.NewPtrUpdateMetadataResponse(), 5*time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one about %q", err, tc.want)
			}
		})
	}
}

func TestConnClosedByContext(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	p := startPeer(t, func(RequestHeader, kmsg.Request) (kmsg.Response, []byte) { <-never; return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	c := dialPeer(t, ctx, p)
	done := make(chan error, 1)
	go func() {
		um := kmsg.NewPtrUpdateMetadataRequest()
		um.Version = 8
		done <- c.RoundTrip(um, kmsg.NewPtrUpdateMetadataResponse(), time.Minute)
	}()
	select {
	case <-p.seen:
	case err := <-done: // the peer refused the request (a version it does not serve)
		t.Fatalf("the peer never had the request: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("request survived its context: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("request not aborted when its context ended")
	}
}

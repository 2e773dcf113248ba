package e2e

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// raw sends req on a connection of its own and decodes the answer. A
// broker not ready yet closes the connection after the request's timeout:
// that is an error.
func raw(addr string, req kmsg.Request) (kmsg.Response, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body = body[4:] // correlation id
	if resp.IsFlexible() {
		body = body[1:] // the response header's empty tagged fields
	}
	return resp, resp.ReadFrom(body)
}

// TestKill9KeepsProducerState SIGKILLs a broker after two idempotent
// acks=-1 batches (no segment roll, no clean shutdown: no producer
// snapshot) and retries both against the restarted broker: each is
// answered with its original offset, and the log holds each once.
func TestKill9KeepsProducerState(t *testing.T) {
	data := t.TempDir()
	port := freePort(t)
	p := startServer(t, data, port)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "idem"); err != nil {
		t.Fatal(err)
	}
	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version, initReq.ProducerID, initReq.ProducerEpoch = 4, -1, -1
	resp, err := raw(p.addr, initReq)
	if err != nil || resp.(*kmsg.InitProducerIDResponse).ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, resp)
	}
	ir := resp.(*kmsg.InitProducerIDResponse)
	now := time.Now().UnixMilli()
	batches := [][]byte{
		recordtest.Idempotent(recordtest.Values(now, "a", "b", "c"), ir.ProducerID, ir.ProducerEpoch, 0),
		recordtest.Idempotent(recordtest.Values(now, "d", "e"), ir.ProducerID, ir.ProducerEpoch, 3),
		recordtest.Idempotent(recordtest.Values(now, "f"), ir.ProducerID, ir.ProducerEpoch, 5),
	}
	produce := func(addr string, b []byte) kmsg.ProduceResponseTopicPartition {
		for {
			req := kmsg.NewPtrProduceRequest()
			req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "idem"
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = append([]byte(nil), b...)
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := raw(addr, req)
			if ctx.Err() != nil {
				t.Fatalf("no answer to the produce: %v", err)
			}
			if err == nil {
				sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
				if sp.ErrorCode != kerr.NotLeaderForPartition.Code && sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
					return sp
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i, want := range []int64{0, 3} {
		if sp := produce(p.addr, batches[i]); sp.ErrorCode != 0 || sp.BaseOffset != want {
			t.Fatalf("batch %d: %v at %d", i, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
		}
	}
	p.kill()

	p2 := startServer(t, data, port)
	for i, want := range []int64{0, 3, 5} { // two retries, then the next batch
		if sp := produce(p2.addr, batches[i]); sp.ErrorCode != 0 || sp.BaseOffset != want {
			t.Fatalf("after kill -9, batch %d: %v at %d, want %d\n%s", i, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, want, p2.stderr.String())
		}
	}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(p2.addr), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	ends, err := kadm.NewClient(cl2).ListEndOffsets(ctx, "idem")
	if o, _ := ends.Lookup("idem", 0); err != nil || o.Offset != 6 {
		t.Fatalf("end offset %d (%v), want 6: each batch once", o.Offset, err)
	}
}

package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// bufferHandler answers Fetch with records in a buffer it overwrites in an
// AfterResponse function, and Produce with the CRC of each partition's
// records as its error message.
type bufferHandler struct{ released chan []byte }

func (h *bufferHandler) Handle(ctx context.Context, _ *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	switch req := req.(type) {
	case *kmsg.FetchRequest:
		buf := bytes.Repeat([]byte("r"), 100)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		rt := kmsg.NewFetchResponseTopic()
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.RecordBatches = buf
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		AfterResponse(ctx, func() {
			copy(buf, bytes.Repeat([]byte("x"), len(buf)))
			h.released <- buf
		})
		return resp, nil
	case *kmsg.ProduceRequest:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				msg := fmt.Sprint(len(p.Records), crc32.ChecksumIEEE(p.Records))
				rp.ErrorMessage = &msg
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	return nil, errors.New("unexpected request")
}

// Functions registered with AfterResponse run once the response is
// encoded: the client gets the bytes as they were, the function runs.
func TestAfterResponseRunsOnceEncoded(t *testing.T) {
	h := &bufferHandler{released: make(chan []byte, 1)}
	ts := startServer(t, Config{Handler: h})
	c := dial(t, ts.Addr())
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	resp := c.roundTrip(req, 1).(*kmsg.FetchResponse)
	if got := resp.Topics[0].Partitions[0].RecordBatches; !bytes.Equal(got, bytes.Repeat([]byte("r"), 100)) {
		t.Fatalf("records changed before they were encoded: %q", got)
	}
	select {
	case <-h.released:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterResponse function not run")
	}
	// Outside a request being handled it does nothing.
	AfterResponse(context.Background(), func() { t.Error("ran without a request") })
}

// Produce frames read into reused buffers each keep their own bytes,
// pipelined or not, whatever their sizes.
func TestPooledProduceFramesKeepTheirRecords(t *testing.T) {
	ts := startServer(t, Config{Handler: &bufferHandler{}})
	c := dial(t, ts.Addr())
	sizes := []int{10, 300 << 10, 1 << 10, 70 << 10, 2 << 20, 5, 12 << 20, 300 << 10, 64 << 10}
	var reqs []*kmsg.ProduceRequest
	var want []string
	for i, n := range sizes {
		rec := bytes.Repeat([]byte{byte(i + 1)}, n)
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(9)
		req.Acks = 1
		rt := kmsg.NewProduceRequestTopic()
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = rec
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		reqs = append(reqs, req)
		want = append(want, fmt.Sprint(n, crc32.ChecksumIEEE(rec)))
	}
	check := func(round, i int) {
		t.Helper()
		resp := c.read(reqs[i].ResponseKind(), int32(i)).(*kmsg.ProduceResponse)
		if got := *resp.Topics[0].Partitions[0].ErrorMessage; got != want[i] {
			t.Fatalf("round %d, request %d: handler saw %s, want %s", round, i, got, want[i])
		}
	}
	var batch []byte
	for i, req := range reqs {
		batch = append(batch, encodeRequest(req, int32(i))...)
	}
	c.write(batch) // pipelined: frames are read ahead of handling
	for i := range reqs {
		check(0, i)
	}
	for i, req := range reqs { // one at a time: each reuses a released frame
		c.write(encodeRequest(req, int32(i)))
		check(1, i)
	}
}

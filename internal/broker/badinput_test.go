package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// TestBadInputDropsOnlyThatConnection sends garbage, oversized and truncated
// frames and unknown keys on raw connections while a franz-go client keeps
// producing and consuming on its own: each bad connection is closed, the
// client never notices.
func TestBadInputDropsOnlyThatConnection(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"socket.request.max.bytes": "1048576"})
	cl := newClient(t, b)
	createTopic(t, cl, "bad", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	frame := func(body []byte) []byte { return binary.BigEndian.AppendUint32(nil, uint32(len(body))) }
	metaReq := kmsg.NewPtrMetadataRequest()
	metaReq.Version = 4
	good := kmsg.NewRequestFormatter().AppendRequest(nil, metaReq, 1)
	cases := map[string][]byte{
		"garbage":          append(frame(make([]byte, 20)), []byte("\xff\xff\x00\x01garbage garbage!!")...),
		"oversized":        binary.BigEndian.AppendUint32(nil, 64<<20),
		"negative size":    binary.BigEndian.AppendUint32(nil, 0xfffffff0),
		"truncated body":   append(frame(good[4:len(good)-3]), good[4:len(good)-3]...),
		"unknown key":      append(frame([]byte{0x7f, 0x00, 0, 1, 0, 0, 0, 9, 0, 0}), 0x7f, 0x00, 0, 1, 0, 0, 0, 9, 0, 0),
		"bad version":      append(frame([]byte{0, 3, 0x7f, 0, 0, 0, 0, 9, 0, 0}), 0, 3, 0x7f, 0, 0, 0, 0, 9, 0, 0),
		"half a size then": {0, 0},
	}
	for name, payload := range cases {
		c, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write(payload)
		if name == "half a size then" {
			c.(*net.TCPConn).CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: connection left open", name)
		}
		c.Close()
		// The well-behaved client is unaffected.
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "bad", Value: []byte(name)}).FirstErr(); err != nil {
			t.Fatalf("after %s: produce: %v", name, err)
		}
	}
	ends, err := kadmEnd(ctx, cl, "bad")
	if err != nil || ends != int64(len(cases)) {
		t.Fatalf("end offset %d, %v", ends, err)
	}
}

// TestProduceRejectsBadBatches checks the per-partition error codes for a
// corrupt CRC, an oversized batch, a control batch and bad acks.
func TestProduceRejectsBadBatches(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b)
	createTopic(t, cl, "rej", 1, map[string]*string{"max.message.bytes": ptr("2000")})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	produce := func(acks int16, batch []byte) int16 {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = acks, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "rej"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		req.Version = 9
		resp := rawRequest(t, b.Addr().String(), req).(*kmsg.ProduceResponse)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	now := time.Now().UnixMilli()
	okBatch := recordtest.Values(now, "a", "b")
	if code := produce(1, okBatch); code != 0 {
		t.Fatalf("good batch: %v", kerr.ErrorForCode(code))
	}
	corrupt := append([]byte(nil), recordtest.Values(now, "c")...)
	corrupt[len(corrupt)-1] ^= 0xff
	big := recordtest.Values(now, string(make([]byte, 3000)))
	control := append([]byte(nil), recordtest.Values(now, "d")...)
	control[22] |= 0x20 // attributes bit 5: control batch
	record.SetCRC(control)
	for _, c := range []struct {
		name  string
		acks  int16
		batch []byte
		want  *kerr.Error
	}{
		{"corrupt crc", 1, corrupt, kerr.CorruptMessage},
		{"too large", 1, big, kerr.MessageTooLarge},
		{"control batch", 1, control, kerr.InvalidRecord},
		{"two batches", 1, append(append([]byte(nil), okBatch...), okBatch...), kerr.InvalidRecord},
		{"acks 2", 2, okBatch, kerr.InvalidRequiredAcks},
	} {
		if code := produce(c.acks, c.batch); code != c.want.Code {
			t.Errorf("%s: got %v, want %v", c.name, kerr.ErrorForCode(code), c.want)
		}
	}
	if n, _ := kadmEnd(ctx, cl, "rej"); n != 2 {
		t.Fatalf("end offset %d after rejected batches, want 2", n)
	}
}

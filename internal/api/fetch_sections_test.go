package api

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/storage"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// sectionLogs are partition logs holding batches of each codec.
type sectionLogs struct {
	m    *storage.Manager
	logs []*storage.Log
}

func newSectionLogs(t *testing.T, codecs ...int8) *sectionLogs {
	t.Helper()
	m, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	sl := &sectionLogs{m: m}
	for i, codec := range codecs {
		l, err := m.Create(kafka.TopicPartition{Topic: "t", Partition: int32(i)}, [16]byte{1}, storage.DefaultLogConfig())
		if err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			var recs []recordtest.Rec
			for k := range 1 + j {
				recs = append(recs, recordtest.Rec{Key: fmt.Appendf(nil, "k%d", k), Value: bytes.Repeat([]byte{byte('a' + j)}, 100*k)})
			}
			appendBatch(t, l, recordtest.Batch(int64(1000+j), codec, recs...))
		}
		sl.logs = append(sl.logs, l)
	}
	return sl
}

func appendBatch(t testing.TB, l *storage.Log, b []byte) {
	t.Helper()
	hs, err := record.Validate(b, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(b, hs, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// sectionHandler answers every Fetch with a response of two topics whose
// partitions carry the logs' batches as sections (a placeholder each),
// inline bytes, nothing, or an error; want is the same response with the
// batches in it, as the copying path answers.
type sectionHandler struct {
	t    *testing.T
	logs *sectionLogs
	want chan kmsg.Response
}

func (h *sectionHandler) Handle(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	if _, ok := req.(*kmsg.FetchRequest); !ok {
		return nil, errors.New("not a fetch")
	}
	resp, want := kmsg.NewPtrFetchResponse(), kmsg.NewPtrFetchResponse()
	var secs [2][]server.Section // by topic: in the response's order
	part := func(r *kmsg.FetchResponse, topic int, i int32, recs []byte, code int16) {
		for len(r.Topics) <= topic {
			tp := kmsg.NewFetchResponseTopic()
			tp.Topic, tp.TopicID = fmt.Sprint("topic", len(r.Topics)), [16]byte{byte(len(r.Topics) + 1)}
			r.Topics = append(r.Topics, tp)
		}
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.ErrorCode, p.HighWatermark, p.LastStableOffset, p.LogStartOffset = i, code, 15, 15, 0
		p.RecordBatches = recs
		r.Topics[topic].Partitions = append(r.Topics[topic].Partitions, p)
	}
	for i, l := range h.logs.logs {
		off := int64(i) // a different start in each
		res, err := l.ReadSection(off, 1<<62, 1<<20, true)
		if err != nil {
			return nil, err
		}
		copied, err := l.Read(off, 1<<62, 1<<20, true)
		if err != nil {
			return nil, err
		}
		topic := i % 2
		secs[topic] = append(secs[topic], res.Section)
		part(resp, topic, int32(i), server.SectionPlaceholder(), 0)
		part(want, topic, int32(i), copied.Records, 0)
		// Between sections: inline bytes, nothing, an error.
		part(resp, topic, int32(100+i), copied.Records, 0)
		part(want, topic, int32(100+i), copied.Records, 0)
		part(resp, topic, int32(200+i), []byte{}, 0)
		part(want, topic, int32(200+i), []byte{}, 0)
		part(resp, topic, int32(300+i), nil, 6)
		part(want, topic, int32(300+i), nil, 6)
	}
	server.AttachSections(ctx, append(secs[0], secs[1]...), fetchPlaceholders(resp))
	want.SetVersion(hdr.Version)
	h.want <- want
	return resp, nil
}

// wrapListener hands out connections that are not *net.TCPConn: the
// server copies sections into the frame for them.
type wrapListener struct{ net.Listener }

type wrappedConn struct{ net.Conn }

func (l wrapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return wrappedConn{c}, err
}

func startSectionServer(t testing.TB, h server.Handler, wrap bool) net.Addr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if wrap {
		ln = wrapListener{ln}
	}
	s, err := server.New(server.Config{Listener: ln, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Serve(); close(done) }()
	t.Cleanup(func() { s.Close(); <-done })
	return ln.Addr()
}

// readRawFrame reads one response frame, size included.
func readRawFrame(t testing.TB, nc net.Conn) ([]byte, error) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang guard
	var head [4]byte
	if _, err := io.ReadFull(nc, head[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(head[:]))
	copy(frame, head[:])
	_, err := io.ReadFull(nc, frame[4:])
	return frame, err
}

// TestFetchSectionsLikeCopying: a response carrying sections (sendfile on
// a TCP connection; copied into the frame on any other) is byte for byte
// the response kmsg encodes with the batches in it, uncompressed and
// compressed, in several topics and partitions, flexible or not.
func TestFetchSectionsLikeCopying(t *testing.T) {
	logs := newSectionLogs(t, recordtest.None, recordtest.Zstd, recordtest.Gzip, recordtest.Lz4, recordtest.None)
	for _, wrap := range []bool{false, true} {
		h := &sectionHandler{t: t, logs: logs, want: make(chan kmsg.Response, 1)}
		addr := startSectionServer(t, h, wrap)
		nc, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		for corr, v := range []int16{4, 7, 11, 12, 13, 16} {
			t.Run(fmt.Sprintf("wrapped %v v%d", wrap, v), func(t *testing.T) {
				req := kmsg.NewPtrFetchRequest()
				req.SetVersion(v)
				if _, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, int32(corr))); err != nil {
					t.Fatal(err)
				}
				got, err := readRawFrame(t, nc)
				if err != nil {
					t.Fatal(err)
				}
				want := wire.AppendResponse(nil, wire.RequestHeader{CorrelationID: int32(corr)}, <-h.want)
				if !bytes.Equal(got, want) {
					i := 0
					for i < len(got) && i < len(want) && got[i] == want[i] {
						i++
					}
					t.Fatalf("%d bytes, want %d (the copying encoding); first difference at %d: %x vs %x", len(got), len(want), i, got[i:min(i+16, len(got))], want[i:min(i+16, len(want))])
				}
			})
		}
	}
}

// bigSectionHandler answers a Fetch with one section of the whole log,
// announcing it on cut.
type bigSectionHandler struct {
	l   *storage.Log
	cut chan struct{}
}

func (h *bigSectionHandler) Handle(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	res, err := h.l.ReadSection(0, 1<<62, 1<<30, true)
	if err != nil {
		return nil, err
	}
	resp := kmsg.NewPtrFetchResponse()
	tp := kmsg.NewFetchResponseTopic()
	tp.Topic = "t"
	p := kmsg.NewFetchResponseTopicPartition()
	p.RecordBatches = server.SectionPlaceholder()
	tp.Partitions = append(tp.Partitions, p)
	resp.Topics = append(resp.Topics, tp)
	server.AttachSections(ctx, []server.Section{res.Section}, fetchPlaceholders(resp))
	close(h.cut)
	return resp, nil
}

// TestTruncationDuringSectionSend: a truncation while a section is being
// sent, with new batches appended at the same positions, ends the
// connection before the response is complete: the client never sees a
// response whose records changed under it. At v11 the records are the
// response's last bytes (the server holds back the section's own last
// byte), at v12 tagged fields follow them.
func TestTruncationDuringSectionSend(t *testing.T) {
	for _, v := range []int16{11, 12} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { truncateDuringSectionSend(t, v) })
	}
}

func truncateDuringSectionSend(t *testing.T, version int16) {
	logs := newSectionLogs(t)
	m := logs.m
	l, err := m.Create(kafka.TopicPartition{Topic: "t", Partition: 0}, [16]byte{1}, storage.DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	big := func(tag byte) []byte {
		return recordtest.Batch(1000, recordtest.None, recordtest.Rec{Value: bytes.Repeat([]byte{tag}, 1<<20)})
	}
	for range 32 { // 32 MiB: more than the socket buffers hold
		appendBatch(t, l, big('a'))
	}
	h := &bigSectionHandler{l: l, cut: make(chan struct{})}
	addr := startSectionServer(t, h, false)
	nc, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	if _, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
		t.Fatal(err)
	}
	<-h.cut
	var head [64]byte // the response has started
	if _, err := io.ReadFull(nc, head[:]); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	for range 33 { // other batches where the old ones were
		appendBatch(t, l, big('b'))
	}
	size := int(binary.BigEndian.Uint32(head[:]))
	nc.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang guard
	n, err := io.ReadFull(nc, make([]byte, size+4-len(head)))
	if err == nil {
		t.Fatalf("the whole %d-byte response arrived after a truncation changed its records", size+4)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		t.Fatalf("after %d bytes: %v, want the connection closed", n, err)
	}
}

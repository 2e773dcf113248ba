package api

// Sending fetched records with sendfile against copying them through user
// space: one in-process server answering a client over loopback with 16
// partitions' batches, 1 MiB each, read from storage as sections
// (sendfile, a plain TCP connection) or as bytes (pread, kmsg encoding,
// write: the connection is wrapped). cpu-s/GB is this process's CPU time
// (server and client) per GiB answered.
//
//	go test ./internal/api -run '^$' -bench FetchRecords -benchtime 2000x

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/storage"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// recordsHandler answers a Fetch with every log from offset 0, up to 1 MiB
// each, as sections when the connection sends them.
type recordsHandler struct{ logs []*storage.Log }

func (h *recordsHandler) Handle(ctx context.Context, c *server.Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	if _, ok := req.(*kmsg.FetchRequest); !ok {
		return nil, errors.New("not a fetch")
	}
	how := storage.MinOneBatch
	if server.SendsSections(ctx) {
		how |= storage.AsSection
	}
	resp := kmsg.NewPtrFetchResponse()
	tp := kmsg.NewFetchResponseTopic()
	tp.Topic = "t"
	var secs []server.Section
	var bufs [][]byte
	for i, l := range h.logs {
		res, err := l.ReadAs(0, 1<<62, 1<<20, how)
		if err != nil {
			return nil, err
		}
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.RecordBatches = int32(i), res.Records
		if res.Section != nil {
			p.RecordBatches = server.SectionPlaceholder()
			secs = append(secs, res.Section)
		}
		bufs = append(bufs, res.Records)
		tp.Partitions = append(tp.Partitions, p)
	}
	resp.Topics = append(resp.Topics, tp)
	if len(secs) > 0 {
		server.AttachSections(ctx, secs, fetchPlaceholders(resp))
	}
	server.AfterResponse(ctx, func() {
		for _, b := range bufs {
			storage.ReleaseRecords(b)
		}
	})
	return resp, nil
}

func BenchmarkFetchRecords(b *testing.B) {
	m, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	h := &recordsHandler{}
	value := make([]byte, 1000)
	for i := range 16 {
		l, err := m.Create(kafka.TopicPartition{Topic: "t", Partition: int32(i)}, [16]byte{1}, storage.DefaultLogConfig())
		if err != nil {
			b.Fatal(err)
		}
		for range 64 { // 16 KiB batches
			var recs []recordtest.Rec
			for range 16 {
				recs = append(recs, recordtest.Rec{Value: value})
			}
			appendBatch(b, l, recordtest.Batch(1000, recordtest.None, recs...))
		}
		h.logs = append(h.logs, l)
	}
	for _, mode := range []struct {
		name string
		wrap bool
	}{{"copy", true}, {"sendfile", false}} {
		b.Run(mode.name, func(b *testing.B) {
			addr := startSectionServer(b, h, mode.wrap)
			nc, err := net.Dial("tcp", addr.String())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(12)
			var total int64
			cpu0 := cpuSeconds()
			b.ResetTimer()
			for i := range b.N {
				if _, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, int32(i))); err != nil {
					b.Fatal(err)
				}
				frame, err := readRawFrame(b, nc)
				if err != nil {
					b.Fatal(err)
				}
				total += int64(len(frame))
			}
			b.StopTimer()
			b.SetBytes(total / int64(b.N))
			b.ReportMetric((cpuSeconds()-cpu0)/(float64(total)/(1<<30)), "cpu-s/GB")
		})
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprint(err))
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

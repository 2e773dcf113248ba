package server

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testFrames are a small request, a Produce frame larger than the read
// buffer (read into a pooled frame) and one larger than the head buffer.
func testFrames() [][]byte {
	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(9)
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = bytes.Repeat([]byte("p"), 100<<10)
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	var topics []string
	for i := range 100 {
		topics = append(topics, fmt.Sprint("topic-", i))
	}
	return [][]byte{
		encodeRequest(kmsg.NewPtrApiVersionsRequest(), 1),
		encodeRequest(produce, 2),
		encodeRequest(metadataRequest(9, topics...), 3),
	}
}

func pipeReader(t *testing.T) (*connReader, net.Conn) {
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close(); server.Close() })
	c := &Conn{nc: server}
	c.touch()
	return &connReader{src: idleReader{c, time.Minute}}, client
}

// writeIn writes b to w in chunks of size bytes, from another goroutine.
func writeIn(w net.Conn, b []byte, size int) {
	go func() {
		for len(b) > 0 {
			n := min(size, len(b))
			if _, err := w.Write(b[:n]); err != nil {
				return // the test failed and closed the pipe
			}
			b = b[n:]
		}
	}()
}

// TestConnReaderFrames: frames arriving one by one, all at once, or a few
// bytes at a time, are read intact. The read buffer is held only while it
// holds bytes of the next frame: waiting for a request the reader holds
// none.
func TestConnReaderFrames(t *testing.T) {
	frames := testFrames()
	check := func(t *testing.T, r *connReader, i int) {
		t.Helper()
		got, pooled, err := r.readFrame(1 << 30)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, frames[i][4:]) {
			t.Fatalf("frame %d: %d bytes differ from the %d sent", i, len(got), len(frames[i])-4)
		}
		if pooled {
			releaseFrame(got)
		}
	}
	t.Run("apart", func(t *testing.T) {
		r, w := pipeReader(t)
		for i, f := range frames {
			writeIn(w, f, len(f))
			check(t, r, i)
			if r.br != nil {
				t.Fatalf("frame %d: read buffer held while waiting for the next request", i)
			}
		}
	})
	t.Run("pipelined", func(t *testing.T) {
		r, w := pipeReader(t)
		writeIn(w, bytes.Join(frames, nil), 1<<30)
		for i := range frames {
			check(t, r, i)
			// After the first frame the next one's bytes are buffered; the
			// large Produce frame is read past the buffer, which may be
			// empty after it.
			if i == 0 && r.br == nil {
				t.Fatal("read buffer released with the next frame's bytes in it")
			}
		}
		if r.br != nil {
			t.Fatal("read buffer held after the last frame")
		}
	})
	for _, size := range []int{1, 5, 511, 513} {
		t.Run(fmt.Sprint("chunks of ", size), func(t *testing.T) {
			r, w := pipeReader(t)
			writeIn(w, bytes.Join(frames, nil), size)
			for i := range frames {
				check(t, r, i)
			}
		})
	}
}

// TestIdleConnectionsHoldNoBuffers: a connection that has answered a
// request and waits for the next holds neither a 64 KiB read buffer nor a
// 64 KiB write buffer (out.go); before, each held both for its life.
func TestIdleConnectionsHoldNoBuffers(t *testing.T) {
	ts := startServer(t, Config{})
	const n = 100
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	for i := range n {
		c := dial(t, ts.Addr())
		c.roundTrip(kmsg.NewPtrApiVersionsRequest(), int32(i))
	}
	per := (int64(heap()) - int64(before)) / n
	t.Logf("%d bytes of heap per idle connection", per)
	if per > ioBufferSize/2 {
		t.Fatalf("an idle connection holds %d bytes of heap: a read or write buffer (%d bytes) of its own", per, ioBufferSize)
	}
}

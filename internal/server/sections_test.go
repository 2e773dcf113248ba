package server

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// fileSection is a Section over a whole temporary file.
type fileSection struct {
	f      *os.File
	n      int
	closed atomic.Int32
}

func newFileSection(t *testing.T, data []byte) *fileSection {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "section")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &fileSection{f: f, n: len(data)}
}

func (s *fileSection) Len() int      { return s.n }
func (s *fileSection) Fd() int       { return int(s.f.Fd()) }
func (s *fileSection) Offset() int64 { return 0 }
func (s *fileSection) Intact() bool  { return true }
func (s *fileSection) Close() error  { s.closed.Add(1); return nil }

// sectionErrHandler attaches a section and then fails, or answers nothing.
type sectionErrHandler struct {
	sec  *fileSection
	fail bool
}

func (h *sectionErrHandler) Handle(ctx context.Context, c *Conn, hdr wire.RequestHeader, req kmsg.Request) (kmsg.Response, error) {
	if _, ok := req.(*kmsg.ApiVersionsRequest); ok {
		return wire.ApiVersionsResponse(hdr.Version, 0), nil
	}
	AttachSections(ctx, []Section{h.sec}, func([]byte) ([]int, error) { return nil, errors.New("unused") })
	if h.fail {
		return nil, errors.New("handler failed")
	}
	return nil, nil
}

// TestSectionsOfNoResponseClosed: the sections attached to a request that
// gets no response (a handler error, or none to send) are closed.
func TestSectionsOfNoResponseClosed(t *testing.T) {
	for _, fail := range []bool{true, false} {
		h := &sectionErrHandler{sec: newFileSection(t, []byte("records")), fail: fail}
		ts := startServer(t, Config{Handler: h})
		c := dial(t, ts.Addr())
		c.write(encodeRequest(metadataRequest(1), 1))
		if fail {
			c.expectClosed()
		} else {
			c.roundTrip(kmsg.NewPtrApiVersionsRequest(), 2) // the first request is done
		}
		if n := h.sec.closed.Load(); n != 1 {
			t.Fatalf("fail %v: section closed %d times", fail, n)
		}
	}
}

package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func sized(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func TestReadFrame(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 250_000) // 2.5 MB: the growing path
	tests := []struct {
		name     string
		in       []byte
		max      int32
		want     []byte
		wantErr  error
		unreadIn int // bytes that must be left in the reader
	}{
		{"small", sized([]byte("hello")), 100, []byte("hello"), nil, 0},
		{"empty body", sized(nil), 100, []byte{}, nil, 0},
		{"at max", sized([]byte("12345")), 5, []byte("12345"), nil, 0},
		{"above max", sized([]byte("123456")), 5, nil, ErrFrameTooLarge, 6},
		{"negative", []byte{0xff, 0xff, 0xff, 0xff, 1, 2}, 100, nil, ErrFrameTooLarge, 2},
		{"clean eof", nil, 100, nil, io.EOF, 0},
		{"short size", []byte{0, 0}, 100, nil, io.ErrUnexpectedEOF, 0},
		{"short body", sized([]byte("hello"))[:7], 100, nil, io.ErrUnexpectedEOF, 0},
		{"big", sized(big), int32(len(big)), big, nil, 0},
		{"big short", sized(big)[:2_000_000], int32(len(big)), nil, io.ErrUnexpectedEOF, 0},
		{"next frame untouched", append(sized([]byte("a")), sized([]byte("b"))...), 100, []byte("a"), nil, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bytes.NewReader(tt.in)
			got, err := ReadFrame(r, tt.max)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(tt.want))
			}
			if r.Len() != tt.unreadIn {
				t.Fatalf("%d bytes left unread, want %d", r.Len(), tt.unreadIn)
			}
		})
	}
}

func TestReadFrameNewBufferEachTime(t *testing.T) {
	r := bytes.NewReader(append(sized([]byte("first")), sized([]byte("other"))...))
	a, _ := ReadFrame(r, 100)
	b, _ := ReadFrame(r, 100)
	if string(a) != "first" || string(b) != "other" {
		t.Fatalf("frames %q %q", a, b)
	}
}

func TestAppendResponse(t *testing.T) {
	metadata := func(v int16) kmsg.Response {
		r := kmsg.NewPtrMetadataResponse()
		r.SetVersion(v)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 1, "localhost", 9092
		r.Brokers = append(r.Brokers, b)
		return r
	}
	tests := []struct {
		name    string
		resp    kmsg.Response
		tagByte bool
	}{
		{"metadata v8 header v0", metadata(8), false},
		{"metadata v9 header v1", metadata(9), true},
		{"api versions v3 header v0", ApiVersionsResponse(3, 0), false},
		{"api versions v0", ApiVersionsResponse(0, kerr.UnsupportedVersion.Code), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("keep")
			out := AppendResponse(prefix, RequestHeader{CorrelationID: 1234}, tt.resp)
			if string(out[:4]) != "keep" {
				t.Fatal("dst prefix overwritten")
			}
			frame, err := ReadFrame(bytes.NewReader(out[4:]), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if corr := int32(binary.BigEndian.Uint32(frame)); corr != 1234 {
				t.Fatalf("correlation id %d", corr)
			}
			body := frame[4:]
			if tt.tagByte {
				if body[0] != 0 {
					t.Fatalf("tag byte %d", body[0])
				}
				body = body[1:]
			}
			got := kmsg.ResponseForKey(tt.resp.Key())
			got.SetVersion(tt.resp.GetVersion())
			if err := got.ReadFrom(body); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.AppendTo(nil), body) {
				t.Fatal("body does not round-trip")
			}
		})
	}
}

package wire

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzParseRequest: no input panics, every error wraps a sentinel, and a
// parsed request re-encodes without panicking.
func FuzzParseRequest(f *testing.F) {
	for _, req := range sampleRequests() {
		f.Add(frameOf(req, 1, kmsg.StringPtr("fuzz")))
		f.Add(frameOf(req, 2, nil))
	}
	f.Add([]byte{0, 18, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		_, req, err := ParseRequest(frame)
		if err != nil {
			if req != nil {
				t.Fatal("request returned with an error")
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		req.AppendTo(nil) // must not panic either
	})
}

package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// shutdownControl answers ControlledShutdown and records what it got; the
// other Control methods are not used.
type shutdownControl struct {
	Control
	got *kmsg.ControlledShutdownRequest
}

func (c *shutdownControl) ControlledShutdown(_ context.Context, req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse {
	c.got = req
	resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
	resp.ErrorCode = kerr.StaleBrokerEpoch.Code
	r := kmsg.NewControlledShutdownResponsePartitionsRemaining()
	r.Topic, r.Partition = "t", 2
	resp.PartitionsRemaining = append(resp.PartitionsRemaining, r)
	return resp
}

// ControlledShutdown v1–v3 is parsed, dispatched through Handle and
// answered with the Control implementation's response, unchanged.
func TestControlledShutdownForwardsToControl(t *testing.T) {
	ctl := &shutdownControl{}
	h := New(Config{NodeID: self, Control: ctl})
	for v := int16(1); v <= 3; v++ {
		req := kmsg.NewPtrControlledShutdownRequest()
		req.Version, req.BrokerID, req.BrokerEpoch = v, 3, 77
		frame := kmsg.NewRequestFormatter().AppendRequest(nil, req, 9)[4:] // without the size
		hdr, parsed, err := wire.ParseRequest(frame)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		out, err := h.Handle(context.Background(), nil, hdr, parsed)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		resp, ok := out.(*kmsg.ControlledShutdownResponse)
		if !ok || resp.ErrorCode != kerr.StaleBrokerEpoch.Code || len(resp.PartitionsRemaining) != 1 {
			t.Fatalf("v%d: answered %+v", v, out)
		}
		wantEpoch := int64(77)
		if v < 2 {
			wantEpoch = -1 // not in v1: the default, which skips the check
		}
		if ctl.got == nil || ctl.got.BrokerID != 3 || ctl.got.BrokerEpoch != wantEpoch {
			t.Fatalf("v%d: forwarded %+v", v, ctl.got)
		}
	}
}

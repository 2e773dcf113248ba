package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// fakeReassign records the requests and whether their context had a
// deadline, and answers with error code 0.
type fakeReassign struct {
	alter    *kmsg.AlterPartitionAssignmentsRequest
	list     *kmsg.ListPartitionReassignmentsRequest
	deadline bool
}

func (f *fakeReassign) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	f.alter = req
	_, f.deadline = ctx.Deadline()
	return req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
}

func (f *fakeReassign) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	f.list = req
	_, f.deadline = ctx.Deadline()
	return req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
}

// Both KIP-455 requests reach the controller's implementation through
// Handle, bounded by their TimeoutMillis; without one they answer
// NOT_CONTROLLER. Both are advertised (v0).
func TestReassignmentRequests(t *testing.T) {
	ctx := context.Background()
	alter, list := kmsg.NewPtrAlterPartitionAssignmentsRequest(), kmsg.NewPtrListPartitionReassignmentsRequest()
	none := New(Config{NodeID: self, Meta: &fakeMeta{}})
	if r, _ := none.Handle(ctx, nil, wire.RequestHeader{}, alter); r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode != kerr.NotController.Code {
		t.Fatalf("alter without a controller: %+v", r)
	}
	if r, _ := none.Handle(ctx, nil, wire.RequestHeader{}, list); r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode != kerr.NotController.Code {
		t.Fatalf("list without a controller: %+v", r)
	}

	f := &fakeReassign{}
	h := New(Config{NodeID: self, Reassign: f, Meta: &fakeMeta{}})
	alter.TimeoutMillis = 30000
	if r, err := h.Handle(ctx, nil, wire.RequestHeader{}, alter); err != nil || r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode != 0 || f.alter != alter || !f.deadline {
		t.Fatalf("alter: %v %+v forwarded=%v deadline=%v", err, r, f.alter == alter, f.deadline)
	}
	list.TimeoutMillis = 0
	if r, err := h.Handle(ctx, nil, wire.RequestHeader{}, list); err != nil || r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode != 0 || f.list != list || f.deadline {
		t.Fatalf("list: %v %+v forwarded=%v deadline=%v", err, r, f.list == list, f.deadline)
	}
	for _, key := range []int16{int16(kmsg.AlterPartitionAssignments), int16(kmsg.ListPartitionReassignments)} {
		if v, ok := wire.Supported[key]; !ok || v.Min != 0 || v.Max != 0 {
			t.Errorf("key %d: %+v %v", key, v, ok)
		}
	}
}

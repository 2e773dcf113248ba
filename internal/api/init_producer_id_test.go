package api

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// fakeProducerIDs issues 100, 101, ...; ids below next were issued.
type fakeProducerIDs struct {
	next int64
	err  error
}

func (f *fakeProducerIDs) Next(ctx context.Context) (int64, error) {
	if f.err != nil {
		return -1, f.err
	}
	f.next++
	return f.next - 1, nil
}

func (f *fakeProducerIDs) Issued(id int64) bool { return id >= 0 && id < f.next }

func initPID(version int16, txnID *string, timeoutMs int32, id int64, epoch int16) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = version, txnID, timeoutMs
	req.ProducerID, req.ProducerEpoch = id, epoch
	return req
}

func TestInitProducerID(t *testing.T) {
	txn, empty := "tx", ""
	cfg, _, err := config.Load(map[string]string{"transaction.max.timeout.ms": "60000"})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		id    int64
		epoch int16
		code  int16
	}
	fail := func(e *kerr.Error) want { return want{-1, -1, e.Code} }
	for _, tc := range []struct {
		name string
		req  *kmsg.InitProducerIDRequest
		err  error // of Next
		want want
	}{
		{name: "v0 new id", req: initPID(0, nil, 0, -1, -1), want: want{100, 0, 0}},
		{name: "v5 new id", req: initPID(5, nil, 60000, -1, -1), want: want{100, 0, 0}},
		// Before v3 there are no id and epoch fields: whatever the
		// struct holds is not on the wire.
		{name: "v2 ignores id", req: initPID(2, nil, 0, 5, 3), want: want{100, 0, 0}},
		{name: "KIP-360 bump", req: initPID(3, nil, 0, 42, 7), want: want{42, 8, 0}},
		{name: "bump to the last epoch", req: initPID(4, nil, 0, 42, 32765), want: want{42, 32766, 0}},
		{name: "exhausted epoch: new id", req: initPID(4, nil, 0, 42, 32766), want: want{100, 0, 0}},
		{name: "max epoch: new id", req: initPID(5, nil, 0, 42, 32767), want: want{100, 0, 0}},
		{name: "never issued: new id", req: initPID(3, nil, 0, 1000, 0), want: want{100, 0, 0}},
		{name: "id without epoch", req: initPID(3, nil, 0, 42, -1), want: fail(kerr.InvalidRequest)},
		{name: "epoch without id", req: initPID(3, nil, 0, -1, 0), want: fail(kerr.InvalidRequest)},
		{name: "negative id", req: initPID(3, nil, 0, -7, 0), want: fail(kerr.InvalidRequest)},
		{name: "no block", req: initPID(5, nil, 0, -1, -1), err: errors.New("store down"),
			want: fail(kerr.CoordinatorLoadInProgress)},
		{name: "no block for an exhausted epoch", req: initPID(5, nil, 0, 42, 32766), err: errors.New("store down"),
			want: fail(kerr.CoordinatorLoadInProgress)},
		{name: "bump needs no block", req: initPID(5, nil, 0, 42, 0), err: errors.New("store down"), want: want{42, 1, 0}},
		{name: "transactional", req: initPID(5, &txn, 60000, -1, -1), want: fail(kerr.UnsupportedVersion)},
		{name: "empty transactional id", req: initPID(1, &empty, 60000, -1, -1), want: fail(kerr.InvalidRequest)},
		{name: "zero timeout", req: initPID(1, &txn, 0, -1, -1), want: fail(kerr.InvalidTransactionTimeout)},
		{name: "timeout above max", req: initPID(1, &txn, 60001, -1, -1), want: fail(kerr.InvalidTransactionTimeout)},
		// A null transactional id ignores the timeout, as Kafka does.
		{name: "idempotent ignores timeout", req: initPID(1, nil, -5, -1, -1), want: want{100, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Config{NodeID: self, Broker: cfg, Meta: &fakeMeta{}, ProducerIDs: &fakeProducerIDs{next: 100, err: tc.err}})
			resp, err := h.Handle(context.Background(), nil, wire.RequestHeader{Key: 22, Version: tc.req.Version}, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			r := resp.(*kmsg.InitProducerIDResponse)
			if got := (want{r.ProducerID, r.ProducerEpoch, r.ErrorCode}); got != tc.want || r.Version != tc.req.Version {
				t.Fatalf("v%d answer %+v (%v), want %+v", r.Version, got, kerr.ErrorForCode(got.code), tc.want)
			}
		})
	}
}

// Without transaction.max.timeout.ms set, Kafka's default (15 minutes)
// bounds the timeout; without ProducerIDs, clients are told to retry.
func TestInitProducerIDDefaults(t *testing.T) {
	cfg, _, err := config.Load(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	txn := "tx"
	h := New(Config{NodeID: self, Broker: cfg, Meta: &fakeMeta{}})
	for _, tc := range []struct {
		req  *kmsg.InitProducerIDRequest
		code int16
	}{
		{initPID(3, &txn, 900000, -1, -1), kerr.UnsupportedVersion.Code},
		{initPID(3, &txn, 900001, -1, -1), kerr.InvalidTransactionTimeout.Code},
		{initPID(3, nil, 0, -1, -1), kerr.CoordinatorNotAvailable.Code},
	} {
		resp, _ := h.Handle(context.Background(), nil, wire.RequestHeader{Key: 22, Version: tc.req.Version}, tc.req)
		if code := resp.(*kmsg.InitProducerIDResponse).ErrorCode; code != tc.code {
			t.Errorf("timeout %d: %v, want %v", tc.req.TransactionTimeoutMillis, kerr.ErrorForCode(code), kerr.ErrorForCode(tc.code))
		}
	}
}

package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// frameOf encodes req as a client would (kmsg's own formatter) and strips
// the size prefix.
func frameOf(req kmsg.Request, corr int32, clientID *string) []byte {
	var f *kmsg.RequestFormatter
	if clientID != nil {
		f = kmsg.NewRequestFormatter(kmsg.FormatterClientID(*clientID))
	} else {
		f = kmsg.NewRequestFormatter()
	}
	return f.AppendRequest(nil, req, corr)[4:]
}

func sampleRequests() []kmsg.Request {
	produce := func(v int16) kmsg.Request {
		r := kmsg.NewPtrProduceRequest()
		r.SetVersion(v)
		r.Acks = -1
		r.TimeoutMillis = 1500
		t := kmsg.NewProduceRequestTopic()
		t.Topic = "orders"
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition = 3
		p.Records = []byte("not really a record batch but bytes")
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		return r
	}
	fetch := func(v int16) kmsg.Request {
		r := kmsg.NewPtrFetchRequest()
		r.SetVersion(v)
		r.MaxWaitMillis = 500
		t := kmsg.NewFetchRequestTopic()
		t.Topic = "orders"
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition, p.FetchOffset, p.PartitionMaxBytes = 1, 42, 1<<20
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		return r
	}
	metadata := func(v int16, topics ...string) kmsg.Request {
		r := kmsg.NewPtrMetadataRequest()
		r.SetVersion(v)
		for _, name := range topics {
			t := kmsg.NewMetadataRequestTopic()
			t.Topic = kmsg.StringPtr(name)
			r.Topics = append(r.Topics, t)
		}
		return r
	}
	apiVersions := func(v int16) kmsg.Request {
		r := kmsg.NewPtrApiVersionsRequest()
		r.SetVersion(v)
		r.ClientSoftwareName, r.ClientSoftwareVersion = "samsa-test", "1.0"
		return r
	}
	initProducerID := func(v int16) kmsg.Request {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.SetVersion(v)
		r.TransactionTimeoutMillis = 60000
		if v >= 3 {
			r.ProducerID, r.ProducerEpoch = 1234, 7
		}
		return r
	}
	return []kmsg.Request{
		produce(3), produce(9), produce(11),
		initProducerID(0), initProducerID(1), initProducerID(2), initProducerID(3), initProducerID(5),
		fetch(4), fetch(12), fetch(16),
		metadata(0, "a", "b"), metadata(9), metadata(12, "a"),
		apiVersions(0), apiVersions(2), apiVersions(3),
	}
}

func TestParseRequestRoundTrip(t *testing.T) {
	for _, want := range sampleRequests() {
		for _, clientID := range []*string{nil, kmsg.StringPtr(""), kmsg.StringPtr("client-1")} {
			name := kmsg.NameForKey(want.Key())
			frame := frameOf(want, 77, clientID)
			h, got, err := ParseRequest(frame)
			if err != nil {
				t.Fatalf("%s v%d: %v", name, want.GetVersion(), err)
			}
			if h.Key != want.Key() || h.Version != want.GetVersion() || h.CorrelationID != 77 {
				t.Errorf("%s v%d: header %+v", name, want.GetVersion(), h)
			}
			if (h.ClientID == nil) != (clientID == nil) || (clientID != nil && *h.ClientID != *clientID) {
				t.Errorf("%s v%d: client id %v, want %v", name, want.GetVersion(), h.ClientID, clientID)
			}
			if !bytes.Equal(got.AppendTo(nil), want.AppendTo(nil)) {
				t.Errorf("%s v%d: body does not round-trip", name, want.GetVersion())
			}
		}
	}
}

func TestParseRequestHeaderV0(t *testing.T) {
	key := int16(kmsg.ControlledShutdown) // v0 is its only request with header v0
	old, had := Supported[key]
	Supported[key] = VersionRange{0, 1}
	defer func() {
		if had {
			Supported[key] = old
		} else {
			delete(Supported, key)
		}
	}()

	req := kmsg.NewPtrControlledShutdownRequest()
	req.SetVersion(0)
	req.BrokerID = 5
	// kmsg's formatter stops after the v0 header, so build the frame here.
	frame := []byte{0, 7, 0, 0, 0, 0, 0, 9}
	h, got, err := ParseRequest(req.AppendTo(frame))
	if err != nil {
		t.Fatal(err)
	}
	if h.ClientID != nil || got.(*kmsg.ControlledShutdownRequest).BrokerID != 5 {
		t.Fatalf("header %+v, request %+v", h, got)
	}
}

func TestParseRequestErrors(t *testing.T) {
	withVersion := func(r kmsg.Request, v int16) kmsg.Request { r.SetVersion(v); return r }
	produce3 := frameOf(sampleRequests()[0], 1, kmsg.StringPtr("c"))
	rawHeader := func(key, version int16, tail ...byte) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		b = binary.BigEndian.AppendUint32(b, 5)
		return append(b, tail...)
	}
	tests := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"empty", nil, ErrMalformed},
		{"short header", []byte{0, 18, 0, 0, 0}, ErrMalformed},
		{"unknown key", rawHeader(999, 0, 0xff, 0xff), ErrUnknownKey},
		{"negative key", rawHeader(-1, 0), ErrUnknownKey},
		{"key not served", frameOf(kmsg.NewPtrDescribeDelegationTokenRequest(), 1, nil), ErrUnknownKey},
		{"produce v2", frameOf(withVersion(kmsg.NewPtrProduceRequest(), 2), 1, nil), ErrUnsupportedVersion},
		{"produce v12", rawHeader(0, 12, 0xff, 0xff, 0), ErrUnsupportedVersion},
		{"api versions v9", frameOf(withVersion(kmsg.NewPtrApiVersionsRequest(), 9), 1, nil), ErrUnsupportedVersion},
		{"negative version", rawHeader(3, -1, 0xff, 0xff), ErrUnsupportedVersion},
		{"no client id", rawHeader(3, 1), ErrMalformed},
		{"client id too long", rawHeader(3, 1, 0, 9, 'a'), ErrMalformed},
		{"client id length -2", rawHeader(3, 1, 0xff, 0xfe), ErrMalformed},
		{"missing header tags", rawHeader(3, 9, 0xff, 0xff), ErrMalformed},
		{"header tag overruns", rawHeader(3, 9, 0xff, 0xff, 1, 0, 10, 1), ErrMalformed},
		{"truncated body", produce3[:len(produce3)-3], ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, req, err := ParseRequest(tt.frame)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if req != nil {
				t.Fatalf("request %T returned with error", req)
			}
			if len(tt.frame) >= fixedHeaderLen && h.CorrelationID == 0 {
				t.Fatalf("header not filled in: %+v", h)
			}
		})
	}
}

// TestParseRequestIgnoresTrailingBytes: bytes after a request's body are
// ignored, as Kafka's broker ignores them: segmentio/kafka-go sends
// DescribeAcls v2+ with one byte too many (the tagged fields of a nested
// struct it has and the schema has not), and Kafka answers it.
func TestParseRequestIgnoresTrailingBytes(t *testing.T) {
	acls := kmsg.NewPtrDescribeACLsRequest()
	acls.SetVersion(3)
	acls.ResourceType, acls.ResourcePatternType, acls.Operation, acls.PermissionType = 1, 1, 1, 1
	v0 := kmsg.NewPtrApiVersionsRequest()
	v0.SetVersion(0)
	for _, req := range append(sampleRequests(), acls, v0) {
		frame := frameOf(req, 7, kmsg.StringPtr("c"))
		_, want, err := ParseRequest(frame)
		if err != nil {
			t.Fatal(err)
		}
		for _, tail := range [][]byte{{0}, {0, 0, 0}} {
			h, got, err := ParseRequest(append(frame[:len(frame):len(frame)], tail...))
			if err != nil {
				t.Fatalf("%s v%d with %d bytes after it: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), len(tail), err)
			}
			if h.CorrelationID != 7 || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s v%d with %d bytes after it decoded as %+v, want %+v", kmsg.NameForKey(req.Key()), req.GetVersion(), len(tail), got, want)
			}
		}
	}
}

func TestParseRequestUnsupportedKeepsHeader(t *testing.T) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(4)
	h, _, err := ParseRequest(frameOf(req, 31, kmsg.StringPtr("newer-client")))
	if !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("err = %v", err)
	}
	if h.Key != 18 || h.Version != 4 || h.CorrelationID != 31 || h.ClientID == nil || *h.ClientID != "newer-client" {
		t.Fatalf("header %+v", h)
	}
}

func TestParseRequestAliasesFrame(t *testing.T) {
	frame := frameOf(sampleRequests()[0], 1, nil)
	_, req, err := ParseRequest(frame)
	if err != nil {
		t.Fatal(err)
	}
	records := req.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Records
	i := bytes.Index(frame, records)
	frame[i] ^= 0xff
	if records[0] != frame[i] {
		t.Fatal("records do not alias the frame; ReadFrame's buffer-per-frame contract is pointless")
	}
}

func TestSupportedWithinKmsg(t *testing.T) {
	for key, rng := range Supported {
		req := kmsg.RequestForKey(key)
		if req == nil {
			t.Errorf("key %d unknown to kmsg", key)
			continue
		}
		if rng.Min < 0 || rng.Min > rng.Max || rng.Max > req.MaxVersion() {
			t.Errorf("%s: range %d-%d, kmsg max %d", kmsg.NameForKey(key), rng.Min, rng.Max, req.MaxVersion())
		}
	}
}

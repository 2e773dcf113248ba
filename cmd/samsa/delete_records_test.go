package main

import (
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestParseDeleteRecordsJSON(t *testing.T) {
	offs, err := parseDeleteRecordsJSON([]byte(`{"partitions":[{"topic":"foo","partition":1,"offset":-1},{"topic":"foo","partition":0,"offset":7}],"version":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("foo", 1); !ok || o.At != -1 {
		t.Fatalf("foo-1: %+v", o)
	}
	if o, ok := offs.Lookup("foo", 0); !ok || o.At != 7 {
		t.Fatalf("foo-0: %+v", o)
	}
	for in, want := range map[string]string{
		`{"partitions":[{"topic":"a","partition":0,"offset":1},{"topic":"a","partition":0,"offset":2}]}`: "Offset json file contains duplicate topic partitions: a-0",
		`{"version":2,"partitions":[]}`: "Not supported version field value 2",
		`{"version":1}`:                 "Missing partitions field",
	} {
		if _, err := parseDeleteRecordsJSON([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	if _, _, err := parseDeleteRecordsArgs([]string{"--bootstrap-server", "x"}, io.Discard); err == nil || err.Error() != `Missing required argument "[offset-json-file]"` {
		t.Errorf("missing file: %v", err)
	}
}

func TestFormatDeleteRecords(t *testing.T) {
	res := kadm.DeleteRecordsResponses{"foo": {
		1: {Topic: "foo", Partition: 1, LowWatermark: -1, Err: kerr.OffsetOutOfRange},
		0: {Topic: "foo", Partition: 0, LowWatermark: 40},
	}}
	want := "Records delete operation completed:\n" +
		"partition: foo-0\tlow_watermark: 40\n" +
		"partition: foo-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: " + kerr.OffsetOutOfRange.Description + "\n"
	if got := formatDeleteRecords(res); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

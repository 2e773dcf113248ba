package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func TestParseElectionArgsErrors(t *testing.T) {
	bs := []string{"--bootstrap-server", "h:1"}
	et := []string{"--election-type", "preferred"}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	cases := []struct {
		name  string
		args  []string
		msg   string
		usage int // -1: not a usage error
	}{
		{"no args", nil, electionAbout, 1},
		{"help", []string{"--help"}, electionAbout, 0},
		{"nothing required", []string{"--all-topic-partitions"}, "Missing required option(s): bootstrap-server, election-type", -1},
		{"no election type", cat(bs, []string{"--all-topic-partitions"}), "Missing required option(s): election-type", -1},
		{"no selection", cat(bs, et), "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file", -1},
		{"two selections", cat(bs, et, []string{"--all-topic-partitions", "--topic", "t", "--partition", "0"}),
			"One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file", -1},
		{"topic without partition", cat(bs, et, []string{"--topic", "t"}), "Missing required option(s): partition", -1},
		{"partition without topic", cat(bs, et, []string{"--all-topic-partitions", "--partition", "1"}), "Option partition is only allowed if topic is used", -1},
		{"bad election type", cat(bs, []string{"--election-type", "dirty", "--all-topic-partitions"}), "Cannot parse argument 'dirty' of option election-type", -1},
		{"bad partition", cat(bs, et, []string{"--topic", "t", "--partition", "x"}), "Cannot parse argument 'x' of option partition", -1},
		{"ambiguous option", cat(bs, et, []string{"--a"}), "Option a is ambiguous; possibilities: admin.config, all-topic-partitions", -1},
		{"not an option", cat(bs, et, []string{"--nope"}), "nope is not a recognized option", -1},
		{"missing value", []string{"--bootstrap-server"}, "Option bootstrap-server requires an argument", -1},
	}
	for _, c := range cases {
		_, err := parseElectionArgs(c.args)
		var ue *usageError
		isUsage := errors.As(err, &ue)
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case c.usage >= 0 && (!isUsage || ue.code != c.usage || ue.msg != c.msg):
			t.Errorf("%s: %v, want usage error %q (exit %d)", c.name, err, c.msg, c.usage)
		case c.usage < 0 && (isUsage || err.Error() != c.msg):
			t.Errorf("%s: %q, want %q", c.name, err, c.msg)
		}
	}
}

func TestParseElectionArgs(t *testing.T) {
	o, err := parseElectionArgs([]string{"--bootstrap-server=a:1,b:2", "--election-type", "UNCLEAN", "--top", "t", "--partition", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if o.bootstrap != "a:1,b:2" || o.how != kadm.ElectLiveReplica || o.topic != "t" || o.partition != 3 || o.all {
		t.Fatalf("parsed %+v", o)
	}
	o, err = parseElectionArgs([]string{"--bootstrap-server", "h:1", "--election-type", "Preferred", "--all-topic-partitions"})
	if err != nil || o.how != kadm.ElectPreferredReplica || !o.all {
		t.Fatalf("parsed %+v, %v", o, err)
	}
}

func TestParseElectionJSON(t *testing.T) {
	got, err := parseElectionJSON([]byte(`{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}`))
	if err != nil || !slices.Equal(got, []kafka.TopicPartition{{Topic: "foo", Partition: 1}, {Topic: "foobar", Partition: 2}}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		`not json`:                         "Replica election data is empty",
		`{"version": 1}`:                   `Replica election data is missing "partitions" field`,
		`{"partitions": [{"topic": "a"}]}`: "No such field exists: `partition`",
		`{"partitions": [{"topic": "a", "partition": 0}, {"topic": "b", "partition": 1}, {"topic": "a", "partition": 0}]}`: "Replica election data contains duplicate partitions: [a-0]",
	} {
		if _, err := parseElectionJSON([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func TestFormatElection(t *testing.T) {
	res := func(topic string, p int32, err error, msg string) kadm.ElectLeadersResult {
		return kadm.ElectLeadersResult{Topic: topic, Partition: p, Err: err, ErrMessage: msg}
	}
	results := kadm.ElectLeadersResults{
		"b": {0: res("b", 0, nil, ""), 2: res("b", 2, kerr.ElectionNotNeeded, "")},
		"a": {10: res("a", 10, nil, ""), 9: res("a", 9, nil, ""),
			1: res("a", 1, kerr.PreferredLeaderNotAvailable, "Failed to elect leader for partition a-1 under strategy PreferredReplicaPartitionLeaderElectionStrategy"),
			0: res("a", 0, kerr.RequestTimedOut, "")},
	}
	out, failed := formatElection(kadm.ElectPreferredReplica, results)
	want := "Successfully completed leader election (PREFERRED) for partitions a-9, a-10, b-0\n" +
		"Valid replica already elected for partitions b-2\n" +
		"Error completing leader election (PREFERRED) for partition: a-0: org.apache.kafka.common.errors.TimeoutException: The request timed out.\n" +
		"Error completing leader election (PREFERRED) for partition: a-1: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for partition a-1 under strategy PreferredReplicaPartitionLeaderElectionStrategy\n"
	if out != want || failed != 2 {
		t.Fatalf("got (%d failed):\n%s\nwant:\n%s", failed, out, want)
	}
	out, _ = formatElection(kadm.ElectLiveReplica, kadm.ElectLeadersResults{"u": {0: res("u", 0, kerr.EligibleLeadersNotAvailable, "")}})
	if want := "Error completing leader election (UNCLEAN) for partition: u-0: org.apache.kafka.common.errors.EligibleLeadersNotAvailableException: Eligible topic partition leaders are not available\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// The command against a fake broker answering ElectLeaders from a table:
// what it sends, prints and exits with.
func TestLeaderElectionMain(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var asked []*kmsg.ElectLeadersRequest
	codes := map[int32]int16{0: 0, 1: kerr.ElectionNotNeeded.Code, 2: kerr.PreferredLeaderNotAvailable.Code}
	c.ControlKey(43, func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ElectLeadersRequest)
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = "t"
		for p := int32(0); p < 3; p++ {
			if req.Topics != nil && !slices.Contains(req.Topics[0].Partitions, p) {
				continue
			}
			if req.Topics == nil && codes[p] == kerr.ElectionNotNeeded.Code {
				continue
			}
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[p]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	bs := strings.Join(c.ListenAddrs(), ",")
	run := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := leaderElectionMain(append([]string{"--bootstrap-server", bs}, args...), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	last := func() *kmsg.ElectLeadersRequest { mu.Lock(); defer mu.Unlock(); return asked[len(asked)-1] }

	out, errOut, code := run("--election-type", "preferred", "--topic", "t", "--partition", "0")
	if code != 0 || out != "Successfully completed leader election (PREFERRED) for partitions t-0\n" || errOut != "" {
		t.Fatalf("one partition: exit %d\n%s%s", code, out, errOut)
	}
	if r := last(); r.ElectionType != 0 || len(r.Topics) != 1 || !slices.Equal(r.Topics[0].Partitions, []int32{0}) {
		t.Fatalf("sent %+v", r)
	}

	file := filepath.Join(t.TempDir(), "election.json")
	os.WriteFile(file, []byte(`{"partitions": [{"topic": "t", "partition": 1}, {"topic": "t", "partition": 2}]}`), 0o644)
	out, errOut, code = run("--election-type", "unclean", "--path-to-json-file", file)
	want := "Valid replica already elected for partitions t-1\n" +
		"Error completing leader election (UNCLEAN) for partition: t-2: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available\n"
	if code != 1 || out != want || errOut != "1 replica(s) could not be elected\n" {
		t.Fatalf("json file: exit %d\n%s%s", code, out, errOut)
	}
	if r := last(); r.ElectionType != 1 {
		t.Fatalf("sent election type %d", r.ElectionType)
	}

	out, _, code = run("--election-type", "preferred", "--all-topic-partitions")
	if code != 1 || !strings.HasPrefix(out, "Successfully completed leader election (PREFERRED) for partitions t-0\nError completing") {
		t.Fatalf("all partitions: exit %d\n%s", code, out)
	}
	if r := last(); r.Topics != nil {
		t.Fatalf("--all-topic-partitions sent topics %+v, want null", r.Topics)
	}

	// An empty file elects nothing and sends nothing.
	os.WriteFile(file, []byte(`{"partitions": []}`), 0o644)
	n := len(asked)
	if out, errOut, code := run("--election-type", "preferred", "--path-to-json-file", file); code != 0 || out != "" || errOut != "" || len(asked) != n {
		t.Fatalf("empty file: exit %d\n%s%s", code, out, errOut)
	}

	if _, errOut, code := run("--election-type", "preferred"); code != 1 || !strings.Contains(errOut, "One and only one") {
		t.Fatalf("no selection: exit %d, %s", code, errOut)
	}
}

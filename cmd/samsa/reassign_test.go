package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Command-line mistakes are caught before connecting, with Kafka's
// messages, the usage on stderr and exit 1 (--help: stdout, exit 0).
func TestReassignArgsUsage(t *testing.T) {
	bs := []string{"--bootstrap-server", "127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		msg  string
		code int
	}{
		{nil, reassignAbout, 1},
		{[]string{"--help"}, reassignAbout, 0},
		{bs, "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list", 1},
		{append([]string{"--execute", "--verify"}, bs...), "Command must include exactly one action", 1},
		{[]string{"--list"}, "Please specify --bootstrap-server", 1},
		{append([]string{"--verify"}, bs...), `Missing required argument "[reassignment-json-file]"`, 1},
		{append([]string{"--generate", "--broker-list", "1"}, bs...), `Missing required argument "[topics-to-move-json-file]"`, 1},
		{append([]string{"--list", "--reassignment-json-file", "f"}, bs...), `Option "[reassignment-json-file]" can't be used with option "[list]"`, 1},
		{append([]string{"--verify", "--reassignment-json-file", "f", "--additional"}, bs...), `Option "[additional]" can't be used with option "[verify]"`, 1},
		{append([]string{"--list", "--bogus"}, bs...), "bogus is not a recognized option", 1},
		{[]string{"--list", "--bootstrap-server"}, "Option bootstrap-server requires an argument", 1},
	} {
		var stdout, stderr bytes.Buffer
		code := reassignMain(tc.args, &stdout, &stderr)
		w := stderr.String()
		if tc.code == 0 {
			w = stdout.String()
		}
		if code != tc.code || !strings.HasPrefix(w, tc.msg) || !strings.Contains(w, "--reassignment-json-file <String>") {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", tc.args, code, stdout.String(), stderr.String())
		}
	}
	o, err := parseReassignArgs([]string{"--bootstrap-server=a:1,b:2", "--generate", "--topics-to-move-json-file", "t.json",
		"--broker-list", "0,1, 2", "--disable-rack-aware"})
	if err != nil || o.action != "generate" || o.bootstrap != "a:1,b:2" || o.topicsFile != "t.json" ||
		joinInt32(o.brokers) != "0,1,2" || !o.disableRackAware {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = parseReassignArgs([]string{"--bootstrap-server", "a:1", "--execute", "--reassignment-json-file", "r.json", "--additional", "--throttle", "5"})
	if err != nil || o.action != "execute" || o.jsonFile != "r.json" || !o.additional || len(o.ignored) != 1 {
		t.Fatalf("%+v %v", o, err)
	}
}

// A reassignment file as kafka-reassign-partitions.sh reads it, and the
// checks --execute makes before asking anything.
func TestParseReassignmentJSON(t *testing.T) {
	moves, err := parseReassignmentJSON([]byte(`{"version":1,"partitions":[
		{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},
		{"topic":"u","partition":3,"replicas":[2]}]}`))
	if err != nil || len(moves) != 2 || moves[1].tp() != "u-3" || strings.Join(moves[1].LogDirs, ",") != "any" {
		t.Fatalf("%+v %v", moves, err)
	}
	for doc, want := range map[string]string{
		`{"partitions":`:                                  "The input string is not a valid JSON",
		`{"version":2,"partitions":[]}`:                   "Not supported version field value 2",
		`{"partitions":[{"partition":0,"replicas":[1]}]}`: "Missing required field 'topic'",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":[]}]}`:     "Size of replicas list [1] is different from size of log dirs list [] for partition t-0",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/d"]}]}`: `log_dirs of t-0 must be "any"`,
	} {
		if _, err := parseReassignmentJSON([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", doc, err)
		}
	}
	for _, tc := range []struct {
		moves []partitionMove
		want  string
	}{
		{nil, "Partition reassignment list cannot be empty"},
		{[]partitionMove{{Topic: "t", Replicas: []int32{}}}, "Partition replica list cannot be empty"},
		{[]partitionMove{{Topic: "t", Replicas: []int32{1}}, {Topic: "t", Replicas: []int32{2}}}, "Partition reassignment contains duplicate topic partitions: t-0"},
		{[]partitionMove{{Topic: "t", Replicas: []int32{1, 2, 1}}, {Topic: "t", Partition: 1, Replicas: []int32{3, 3}}},
			"Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1. t-1 contains multiple entries for 3"},
	} {
		if err := checkExecuteMoves(tc.moves); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v", tc.moves, err)
		}
	}
	if _, err := parseTopicsToMove([]byte(`{"topics":[{"topic":"a"},{"topic":"a"}]}`), []int32{1}); err == nil ||
		err.Error() != "List of topics to reassign contains duplicate entries: a" {
		t.Errorf("duplicate topics: %v", err)
	}
	if _, err := parseTopicsToMove([]byte(`{"topics":[]}`), []int32{1, 2, 1}); err == nil || err.Error() != "Broker list contains duplicate entries: 1" {
		t.Errorf("duplicate brokers: %v", err)
	}
}

// Output lines as Kafka's tool prints them; partitions sorted by topic,
// then partition number.
func TestReassignOutput(t *testing.T) {
	current := map[string][]int32{"t-10": {1}, "t-2": {0, 1}, "a-0": {2}}
	if got, want := formatRollback(current), "Current partition replica assignment\n\n"+
		`{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[2],"log_dirs":["any"]},`+
		`{"topic":"t","partition":2,"replicas":[0,1],"log_dirs":["any","any"]},{"topic":"t","partition":10,"replicas":[1],"log_dirs":["any"]}]}`+
		"\n\nSave this to use as the --reassignment-json-file option during rollback"; got != want {
		t.Errorf("rollback:\n%s\nwant\n%s", got, want)
	}
	if got := startedLine([]partitionMove{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0}}); got != "Successfully started partition reassignments for t-0,t-1" {
		t.Errorf("%q", got)
	}
	if got := startedLine([]partitionMove{{Topic: "t"}}); got != "Successfully started partition reassignment for t-0" {
		t.Errorf("%q", got)
	}
	moves := []partitionMove{{Topic: "t", Partition: 0, Replicas: []int32{1, 2}}, {Topic: "t", Partition: 1, Replicas: []int32{2}},
		{Topic: "t", Partition: 2, Replicas: []int32{3}}}
	ongoing := map[string]kadm.ListPartitionReassignmentsResponse{"t-1": {Replicas: []int32{2, 0}}}
	got := formatVerify(moves, map[string][]int32{"t-0": {1, 2}, "t-1": {2, 0}, "t-2": {0, 1}}, ongoing)
	want := "Status of partition reassignment:\nReassignment of partition t-0 is completed.\n" +
		"Reassignment of partition t-1 is still in progress.\n" +
		"There is no active reassignment of partition t-2, but replica set is 0,1 rather than 3."
	if got != want {
		t.Errorf("verify:\n%s\nwant\n%s", got, want)
	}
	if got := formatReassignmentList(nil); got != "No partition reassignments found." {
		t.Errorf("%q", got)
	}
	list := map[string]kadm.ListPartitionReassignmentsResponse{
		"t-0": {Replicas: []int32{1, 2, 0}, AddingReplicas: []int32{2}, RemovingReplicas: []int32{0}},
		"a-1": {Replicas: []int32{3, 1}, AddingReplicas: []int32{3}},
	}
	if got, want := formatReassignmentList(list), "Current partition reassignments:\na-1: replicas: 3,1. adding: 3.\n"+
		"t-0: replicas: 1,2,0. adding: 2. removing: 0."; got != want {
		t.Errorf("list:\n%s\nwant\n%s", got, want)
	}
	msg := "Replica assignment has brokers that are not alive."
	resp := kadm.AlterPartitionAssignmentsResponses{"t": {
		1: {Topic: "t", Partition: 1, Err: kerr.InvalidReplicaAssignment, ErrMessage: msg},
		0: {Topic: "t", Partition: 0, Err: kerr.NoReassignmentInProgress},
		2: {Topic: "t", Partition: 2},
	}}
	if got := partitionErrors(resp); len(got) != 2 || got[0] != "t-0: "+kerr.NoReassignmentInProgress.Description || got[1] != "t-1: "+msg {
		t.Errorf("partition errors %q", got)
	}
}

// Refusals print their message alone, other failures "Error: …"; both exit 1.
func TestReassignMainFailures(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := reassignMain([]string{"--bootstrap-server", "127.0.0.1:1", "--execute", "--reassignment-json-file", t.TempDir() + "/missing.json"}, &stdout, &stderr)
	if code != 1 || !strings.HasPrefix(stdout.String(), "Error: open ") {
		t.Fatalf("exit %d: %q %q", code, stdout.String(), stderr.String())
	}
}

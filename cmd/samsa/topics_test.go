package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseTopicsArgsUsage(t *testing.T) {
	bs := []string{"--bootstrap-server", "h:9092"}
	cases := []struct {
		name string
		args []string
		msg  string
		code int
	}{
		{"no args", nil, "Create, delete, describe, or change a topic.", 1},
		{"help", []string{"--help"}, "This tool helps to create, delete, describe, or change a topic.", 0},
		{"no action", bs, "Command must include exactly one action: --list, --describe, --create, --alter or --delete", 1},
		{"two actions", append([]string{"--list", "--describe"}, bs...), "Command must include exactly one action: --list, --describe, --create, --alter or --delete", 1},
		{"no bootstrap", []string{"--list"}, `Missing required argument "[bootstrap-server]"`, 1},
		{"create without topic", append([]string{"--create"}, bs...), `Missing required argument "[topic]"`, 1},
		{"describe if-exists without topic", append([]string{"--describe", "--if-exists"}, bs...), `Missing required argument "[topic]"`, 1},
		{"alter without partitions", append([]string{"--alter", "--topic", "t"}, bs...), `Missing required argument "[partitions]"`, 1},
		{"alter with config", append([]string{"--alter", "--topic", "t", "--partitions", "2", "--config", "a=b"}, bs...),
			`Option combination "[bootstrap-server],[config]" can't be used with option "[alter]" (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)`, 1},
		{"list with partitions", append([]string{"--list", "--partitions", "3"}, bs...), `Option "[partitions]" can't be used with option "[list]"`, 1},
		{"alter with rf", append([]string{"--alter", "--topic", "t", "--partitions", "3", "--replication-factor", "2"}, bs...),
			`Option "[replication-factor]" can't be used with option "[alter]"`, 1},
		{"create assignment and partitions", append([]string{"--create", "--topic", "t", "--partitions", "3", "--replica-assignment", "0,1"}, bs...),
			`Option "[replica-assignment]" can't be used with option "[partitions]"`, 1},
		{"two reports", append([]string{"--describe", "--under-replicated-partitions", "--unavailable-partitions"}, bs...),
			`Option "[under-replicated-partitions]" can't be used with option "[unavailable-partitions]"`, 1},
		{"report on list", append([]string{"--list", "--unavailable-partitions"}, bs...),
			`Option "[unavailable-partitions]" can't be used with option "[list]"`, 1},
		{"if-not-exists on delete", append([]string{"--delete", "--topic", "t", "--if-not-exists"}, bs...),
			`Option "[if-not-exists]" can't be used with option "[delete]"`, 1},
		{"exclude-internal on delete", append([]string{"--delete", "--topic", "t", "--exclude-internal"}, bs...),
			`Option "[exclude-internal]" can't be used with option "[delete]"`, 1},
		{"delete-config", append([]string{"--alter", "--topic", "t", "--partitions", "2", "--delete-config", "x"}, bs...),
			`Option "[delete-config]" can't be used with option "[bootstrap-server]"`, 1},
	}
	for _, c := range cases {
		_, err := parseTopicsArgs(c.args)
		ue, ok := err.(*usageError)
		if !ok || ue.msg != c.msg || ue.code != c.code {
			t.Errorf("%s: got %v, want usage error %q (exit %d)", c.name, err, c.msg, c.code)
		}
	}
}

func TestParseTopicsArgsValues(t *testing.T) {
	o, err := parseTopicsArgs([]string{"--bootstrap-server=a:1,b:2", "--create", "--topic", "t",
		"--partitions", "6", "--replication", "3", "--config", "retention.ms = 100", "--config", "cleanup.policy=compact",
		"--config", "retention.ms=200", "--if-not-exists"})
	if err != nil {
		t.Fatal(err)
	}
	if o.action != "create" || o.bootstrap != "a:1,b:2" || o.topic != "t" || o.partitions != 6 || o.rf != 3 || !o.has["if-not-exists"] {
		t.Fatalf("parsed %+v", o)
	}
	want := [][2]string{{"retention.ms", "200"}, {"cleanup.policy", "compact"}}
	if !slices.Equal(o.configs, want) {
		t.Fatalf("configs %v, want %v", o.configs, want)
	}
	o, err = parseTopicsArgs([]string{"--bootstrap-server", "h:1", "--create", "--topic", "t", "--replica-assignment", "0:1, 1:2 ,2:0,"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.assignment) != 3 || !slices.Equal(o.assignment[1], []int32{1, 2}) {
		t.Fatalf("assignment %v", o.assignment)
	}
}

// Mistakes found while reading values are Kafka's runtime errors, printed
// as "Error while executing topic command : ...".
func TestParseTopicsArgsErrors(t *testing.T) {
	create := []string{"--bootstrap-server", "h:1", "--create", "--topic", "t"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--list", "--bogus"}, "bogus is not a recognized option"},
		{[]string{"--list", "--bootstrap-server"}, "Option bootstrap-server requires an argument"},
		{[]string{"--li=x", "--bootstrap-server", "h"}, "Option list does not take an argument"},
		{[]string{"--under", "--describe"}, "Option under is ambiguous; possibilities: under-min-isr-partitions, under-replicated-partitions"},
		{append(slices.Clone(create), "--partitions", "x"), "Cannot parse argument 'x' of option partitions"},
		{append(slices.Clone(create), "--partitions", "0"), "The partitions must be greater than 0"},
		{append(slices.Clone(create), "--replication-factor", "40000"), "The replication factor must be between 1 and 32767 inclusive"},
		{append(slices.Clone(create), "--config", "a="), `requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".`},
		{append(slices.Clone(create), "--config", "a=b=c"), `requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".`},
		{append(slices.Clone(create), "--replica-assignment", "0:1:0"), "Partition replica lists may not contain duplicate entries: 0"},
		{append(slices.Clone(create), "--replica-assignment", "0:1,2"), "Partition 1 has different replication factor: [2]"},
		{append(slices.Clone(create), "--replica-assignment", "0,,1"), `For input string: ""`},
		{append(slices.Clone(create), "--replica-assignment", "a"), `For input string: "a"`},
	}
	for _, c := range cases {
		_, err := parseTopicsArgs(c.args)
		if _, usage := err.(*usageError); err == nil || usage || err.Error() != c.want {
			t.Errorf("%q: got %v, want %q", c.args, err, c.want)
		}
	}
}

func TestTopicsMainExitCodes(t *testing.T) {
	cases := []struct {
		args         []string
		code         int
		stdout       string
		stderrPrefix string
	}{
		{[]string{"--list"}, 1, "", "Missing required argument \"[bootstrap-server]\"\nOption "},
		{[]string{"--help"}, 0, "This tool helps", ""},
		{[]string{"--list", "--nope", "--bootstrap-server", "h"}, 1, "Error while executing topic command : nope is not a recognized option\n", ""},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := topicsMain(c.args, &out, &errOut)
		if code != c.code || !strings.HasPrefix(out.String(), c.stdout) || !strings.HasPrefix(errOut.String(), c.stderrPrefix) {
			t.Errorf("%q: exit %d, stdout %q, stderr %.80q", c.args, code, out.String(), errOut.String())
		}
	}
}

func TestFilterTopics(t *testing.T) {
	all := []string{"__consumer_offsets", "bar", "foo", "foo.1", "foobar", "test.topic", "testXtopic"}
	internal := func(n string) bool { return n == "__consumer_offsets" }
	cases := []struct {
		pattern string
		set     bool
		exclude bool
		want    []string
	}{
		{"", false, false, all},
		{"", false, true, all[1:]},
		{"foo", true, false, []string{"foo"}},
		{"foo.*", true, false, []string{"foo", "foo.1", "foobar"}},
		{"foo, bar", true, false, []string{"bar", "foo"}},
		{`"foo"`, true, false, []string{"foo"}},
		{`test\.topic`, true, false, []string{"test.topic"}},
		{"test.topic", true, false, []string{"test.topic", "testXtopic"}},
		{"__.*", true, true, nil},
		{"nope", true, false, nil},
	}
	for _, c := range cases {
		got, err := filterTopics(all, internal, c.pattern, c.set, c.exclude)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q exclude=%v: got %v %v, want %v", c.pattern, c.exclude, got, err, c.want)
		}
	}
	if _, err := filterTopics(all, internal, "foo(", true, false); err == nil {
		t.Error("bad regex accepted")
	}
}

func sp(s string) *string { return &s }

func describeFixture() (kadm.TopicDetails, kadm.ResourceConfigs) {
	id := kadm.TopicID{0xfb, 0xff}
	td := kadm.TopicDetails{
		"orders": {Topic: "orders", ID: id, Partitions: kadm.PartitionDetails{
			0: {Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
			1: {Partition: 1, Leader: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2}},
			2: {Partition: 2, Leader: -1, Replicas: []int32{3, 1, 2}, ISR: nil},
		}},
		"plain": {Topic: "plain", Partitions: kadm.PartitionDetails{
			0: {Partition: 0, Leader: 4, Replicas: []int32{4}, ISR: []int32{4}},
		}},
	}
	configs := kadm.ResourceConfigs{
		{Name: "orders", Configs: []kadm.Config{
			{Key: "cleanup.policy", Value: sp("compact"), Source: kmsg.ConfigSourceDynamicTopicConfig},
			{Key: "min.insync.replicas", Value: sp("2"), Source: kmsg.ConfigSourceDynamicTopicConfig},
			{Key: "retention.ms", Value: sp("604800000"), Source: kmsg.ConfigSourceDefaultConfig},
			{Key: "segment.bytes", Value: sp("1073741824"), Source: kmsg.ConfigSourceStaticBrokerConfig},
		}},
		{Name: "plain", Configs: []kadm.Config{
			{Key: "min.insync.replicas", Value: sp("1"), Source: kmsg.ConfigSourceDefaultConfig},
		}},
	}
	return td, configs
}

func TestFormatDescribe(t *testing.T) {
	td, configs := describeFixture()
	live := []int32{1, 2, 3}
	ordersHead := "Topic: orders\tTopicId: -_8AAAAAAAAAAAAAAAAAAA\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: cleanup.policy=compact,min.insync.replicas=2,segment.bytes=1073741824\n"
	p0 := "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
	p1 := "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2\n"
	p2 := "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,1,2\tIsr: \n"
	plainHead := "Topic: plain\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
	plain0 := "\tTopic: plain\tPartition: 0\tLeader: 4\tReplicas: 4\tIsr: 4\n"
	cases := []struct {
		name string
		f    describeFilter
		want string
	}{
		{"all", describeFilter{}, ordersHead + p0 + p1 + p2 + plainHead + plain0},
		{"under-replicated", describeFilter{underReplicated: true}, p1 + p2},
		{"unavailable", describeFilter{unavailable: true}, p2 + plain0}, // broker 4 is not live
		{"under-min-isr", describeFilter{underMinIsr: true}, p1 + p2},
		{"at-min-isr", describeFilter{atMinIsr: true}, plain0},
		{"with-overrides", describeFilter{withOverrides: true}, ordersHead},
	}
	for _, c := range cases {
		if got := formatDescribe(c.f, td, configs, live); got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

func TestFormatList(t *testing.T) {
	if got := formatList([]string{"a", "b"}); got != "a\nb\n" {
		t.Errorf("got %q", got)
	}
	if got := formatList(nil); got != "\n" {
		t.Errorf("empty: got %q", got)
	}
}

func TestErrorText(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&kafkaError{err: kerr.TopicAlreadyExists, msg: sp("Topic 'x' already exists.")}, "Topic 'x' already exists."},
		{&kafkaError{err: kerr.NotController}, kerr.NotController.Description},
		{&kafkaError{err: kerr.NotController, msg: sp("")}, kerr.NotController.Description},
	}
	for _, c := range cases {
		if got := errorText(c.err); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestBuildRequests(t *testing.T) {
	o, err := parseTopicsArgs([]string{"--bootstrap-server", "h", "--create", "--topic", "t", "--replica-assignment", "1:2,2:3", "--config", "a=b"})
	if err != nil {
		t.Fatal(err)
	}
	ct := buildCreateTopics(o).Topics[0]
	if ct.NumPartitions != -1 || ct.ReplicationFactor != -1 || len(ct.ReplicaAssignment) != 2 ||
		ct.ReplicaAssignment[1].Partition != 1 || !slices.Equal(ct.ReplicaAssignment[1].Replicas, []int32{2, 3}) ||
		len(ct.Configs) != 1 || *ct.Configs[0].Value != "b" {
		t.Fatalf("create request topic %+v", ct)
	}
	o, err = parseTopicsArgs([]string{"--bootstrap-server", "h", "--alter", "--topic", "t.*", "--partitions", "3", "--replica-assignment", "1,2,3"})
	if err != nil {
		t.Fatal(err)
	}
	td := kadm.TopicDetails{"t1": {Partitions: kadm.PartitionDetails{0: {}}}, "t2": {Partitions: kadm.PartitionDetails{0: {}, 1: {}}}}
	req := buildCreatePartitions(o, td, []string{"t1", "t2"})
	if len(req.Topics) != 2 || req.Topics[0].Count != 3 || len(req.Topics[0].Assignment) != 2 ||
		!slices.Equal(req.Topics[0].Assignment[0].Replicas, []int32{2}) || len(req.Topics[1].Assignment) != 1 ||
		!slices.Equal(req.Topics[1].Assignment[0].Replicas, []int32{3}) {
		t.Fatalf("create partitions request %+v", req.Topics)
	}
	o.assignment = nil
	if req := buildCreatePartitions(o, td, []string{"t1"}); req.Topics[0].Assignment != nil {
		t.Fatal("automatic placement sent an assignment")
	}
}

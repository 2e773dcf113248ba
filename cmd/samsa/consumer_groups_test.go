package main

import (
	"testing"
)

func TestParseGroupsArgsUsage(t *testing.T) {
	bs := []string{"--bootstrap-server", "h:9092"}
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"no action", bs, "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"},
		{"two actions", append([]string{"--list", "--describe"}, bs...), "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"},
		{"no bootstrap", []string{"--list"}, `Missing required argument "[bootstrap-server]"`},
		{"describe without group", append([]string{"--describe"}, bs...), "Option [describe] takes one of these options: [all-groups], [group]"},
		{"reset without scope", append([]string{"--reset-offsets", "--group", "g", "--all-topics"}, bs...),
			"Option [reset-offsets] takes exactly one of these options: [to-earliest], [to-latest], [to-current], [to-offset], [shift-by], [to-datetime]"},
		{"reset without topics", append([]string{"--reset-offsets", "--group", "g", "--to-earliest"}, bs...),
			"Option [reset-offsets] takes one of these options: [all-topics], [topic]"},
		{"reset dry-run and execute", append([]string{"--reset-offsets", "--group", "g", "--to-earliest", "--all-topics", "--dry-run", "--execute"}, bs...),
			"Option [reset-offsets] only accepts one of [execute, dry-run]"},
		{"delete-offsets without topic", append([]string{"--delete-offsets", "--group", "g"}, bs...),
			"Option [delete-offsets] takes the following options: [topic], [group]"},
	}
	for _, c := range cases {
		_, err := parseGroupsArgs(c.args)
		ue, ok := err.(*usageError)
		if !ok || ue.msg != c.msg || ue.code != 1 {
			t.Errorf("%s: got %v, want usage error %q", c.name, err, c.msg)
		}
	}
	if o, err := parseGroupsArgs(append([]string{"--describe", "--group", "a", "--group", "b", "--members"}, bs...)); err != nil ||
		o.action != "describe" || len(o.groups) != 2 || !o.has["members"] {
		t.Fatalf("describe: %+v %v", o, err)
	}
}

// The --describe table has kafka-consumer-groups.sh's columns, widths that
// follow the longest values, and "-" for what is unknown.
func TestFormatOffsets(t *testing.T) {
	got := formatOffsets([]offsetRow{
		{Group: "g", Topic: "orders", Partition: 0, Current: 5, End: 9, ConsumerID: "c-1-abc", Host: "/127.0.0.1", ClientID: "c-1"},
		{Group: "g", Topic: "orders", Partition: 1, Current: -1, End: 3, ConsumerID: "-", Host: "-", ClientID: "-"},
	})
	want := "\n" +
		"GROUP TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID HOST       CLIENT-ID\n" +
		"g     orders 0          5               9               4               c-1-abc     /127.0.0.1 c-1\n" +
		"g     orders 1          -               3               -               -           -          -\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestNewOffsetClamps(t *testing.T) {
	o := &groupsOpts{has: map[string]bool{"shift-by": true}, vals: map[string][]string{"shift-by": {"-10"}}}
	if n, err := newOffset(o, 2, 20, 5, nil, "t", 0); err != nil || n != 2 {
		t.Fatalf("shift-by -10 from 5 in [2,20]: %d %v", n, err)
	}
	o = &groupsOpts{has: map[string]bool{"to-offset": true}, vals: map[string][]string{"to-offset": {"99"}}}
	if n, _ := newOffset(o, 2, 20, 5, nil, "t", 0); n != 20 {
		t.Fatalf("to-offset 99 in [2,20]: %d", n)
	}
	if _, err := parseDatetime("2026-01-02T03:04:05.006"); err != nil {
		t.Fatal(err)
	}
}

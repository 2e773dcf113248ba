package main

// samsa consumer-groups: kafka-consumer-groups.sh (Kafka 3.x) over the
// Kafka protocol, through franz-go's kadm: --list, --describe (offsets,
// --members [--verbose], --state) of --group or --all-groups,
// --reset-offsets (--to-earliest|--to-latest|--to-current|--to-offset|
// --shift-by|--to-datetime; --dry-run, the default, or --execute; --topic
// or --all-topics), --delete and --delete-offsets. Usage errors print the
// message and the usage to stderr and exit 1; failures print "Error: ..."
// and exit 1. Output formats are in consumer_groups_format.go.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const groupsUsage = `Usage: samsa consumer-groups --bootstrap-server HOST:PORT
  --list
  --describe (--group G ... | --all-groups) [--offsets | --members [--verbose] | --state]
  --reset-offsets (--group G | --all-groups) (--topic T[:P,P...] ... | --all-topics)
      (--to-earliest | --to-latest | --to-current | --to-offset N | --shift-by N | --to-datetime YYYY-MM-DDTHH:mm:SS.sss)
      [--dry-run | --execute]
  --delete (--group G ... | --all-groups)
  --delete-offsets --group G --topic T[:P,P...] ...
`

var groupsFlags = map[string]bool{
	"bootstrap-server": true, "group": true, "topic": true, "to-offset": true, "shift-by": true,
	"to-datetime": true, "command-config": true, "timeout": true,
	"list": false, "describe": false, "reset-offsets": false, "delete": false, "delete-offsets": false,
	"all-groups": false, "all-topics": false, "members": false, "state": false, "offsets": false,
	"verbose": false, "to-earliest": false, "to-latest": false, "to-current": false,
	"dry-run": false, "execute": false, "help": false,
}

var groupActions = []string{"list", "describe", "reset-offsets", "delete", "delete-offsets"}

var resetScopes = []string{"to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime"}

type groupsOpts struct {
	has       map[string]bool
	bootstrap string
	action    string
	groups    []string
	topics    []string
	vals      map[string][]string
}

func runConsumerGroups(args []string) error { return runTool(groupsMain, args) }

func groupsMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseGroupsArgs(args)
	if code, ok := printUsageError(err, groupsUsage, stdout, stderr); ok {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, "Error: "+err.Error())
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), topicsTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err != nil {
		fmt.Fprintln(stderr, "Error: "+err.Error())
		return 1
	}
	defer cl.Close()
	if err := executeGroups(ctx, kadm.NewClient(cl), o, stdout); err != nil {
		fmt.Fprintln(stdout, "Error: "+errorText(err))
		return 1
	}
	return 0
}

func parseGroupsArgs(args []string) (*groupsOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{"List all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.", 1}
	}
	vals, err := scanOptions(args, groupsFlags)
	if err != nil {
		return nil, &usageError{err.Error(), 1}
	}
	o := &groupsOpts{has: map[string]bool{}, vals: vals, groups: vals["group"], topics: vals["topic"]}
	for k := range vals {
		o.has[k] = true
	}
	if o.has["help"] {
		return nil, &usageError{"This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.", 0}
	}
	var actions []string
	for _, a := range groupActions {
		if o.has[a] {
			actions = append(actions, a)
		}
	}
	if len(actions) != 1 {
		return nil, &usageError{"Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets", 1}
	}
	o.action = actions[0]
	if b := vals["bootstrap-server"]; len(b) > 0 {
		o.bootstrap = b[len(b)-1]
	} else {
		return nil, &usageError{"Missing required argument \"[bootstrap-server]\"", 1}
	}
	return o, o.check()
}

func (o *groupsOpts) check() error {
	needGroup := o.action == "describe" || o.action == "delete" || o.action == "reset-offsets"
	if needGroup && len(o.groups) == 0 && !o.has["all-groups"] {
		return &usageError{fmt.Sprintf("Option [%s] takes one of these options: [all-groups], [group]", o.action), 1}
	}
	switch o.action {
	case "delete-offsets":
		if len(o.groups) != 1 || len(o.topics) == 0 {
			return &usageError{"Option [delete-offsets] takes the following options: [topic], [group]", 1}
		}
	case "reset-offsets":
		n := 0
		for _, s := range resetScopes {
			if o.has[s] {
				n++
			}
		}
		if n != 1 {
			return &usageError{"Option [reset-offsets] takes exactly one of these options: " +
				"[to-earliest], [to-latest], [to-current], [to-offset], [shift-by], [to-datetime]", 1}
		}
		if len(o.topics) == 0 == !o.has["all-topics"] {
			return &usageError{"Option [reset-offsets] takes one of these options: [all-topics], [topic]", 1}
		}
		if o.has["dry-run"] && o.has["execute"] {
			return &usageError{"Option [reset-offsets] only accepts one of [execute, dry-run]", 1}
		}
	}
	return nil
}

func (o *groupsOpts) last(name string) string {
	v := o.vals[name]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

func executeGroups(ctx context.Context, adm *kadm.Client, o *groupsOpts, stdout io.Writer) error {
	if o.action == "list" {
		lg, err := adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		for _, g := range lg.Sorted() {
			fmt.Fprintln(stdout, g.Group)
		}
		return nil
	}
	groups := o.groups
	if o.has["all-groups"] {
		lg, err := adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		groups = lg.Groups()
		slices.Sort(groups)
	}
	switch o.action {
	case "describe":
		return describeGroupsCmd(ctx, adm, o, groups, stdout)
	case "delete":
		return deleteGroupsCmd(ctx, adm, groups, stdout)
	case "delete-offsets":
		return deleteOffsetsCmd(ctx, adm, o, stdout)
	}
	return resetOffsetsCmd(ctx, adm, o, groups, stdout)
}

func deleteGroupsCmd(ctx context.Context, adm *kadm.Client, groups []string, stdout io.Writer) error {
	res, err := adm.DeleteGroups(ctx, groups...)
	if err != nil {
		return err
	}
	var ok, failed []string
	for _, g := range groups {
		if r := res[g]; r.Err != nil {
			failed = append(failed, fmt.Sprintf("Error: Deletion of group '%s' failed due to %s", g, r.Err))
		} else {
			ok = append(ok, "'"+g+"'")
		}
	}
	if len(ok) > 0 {
		fmt.Fprintf(stdout, "Deletion of requested consumer groups (%s) was successful.\n", strings.Join(ok, ", "))
	}
	for _, f := range failed {
		fmt.Fprintln(stdout, f)
	}
	if len(failed) > 0 {
		return errors.New("some groups could not be deleted")
	}
	return nil
}

func deleteOffsetsCmd(ctx context.Context, adm *kadm.Client, o *groupsOpts, stdout io.Writer) error {
	set, err := topicPartitions(ctx, adm, o.topics)
	if err != nil {
		return err
	}
	res, err := adm.DeleteOffsets(ctx, o.groups[0], set)
	if err != nil {
		return err
	}
	var rows []deleteOffsetRow
	failed := false
	for _, t := range set.Sorted() {
		for _, p := range t.Partitions {
			st := "Successful"
			if e := res[t.Topic][p]; e != nil {
				st, failed = "Error: "+e.Error(), true
			}
			rows = append(rows, deleteOffsetRow{Topic: t.Topic, Partition: p, Status: st})
		}
	}
	if failed {
		fmt.Fprintf(stdout, "Request failed for deleting offsets with topic %s group %s\n", strings.Join(o.topics, ", "), o.groups[0])
	} else {
		fmt.Fprintf(stdout, "Request succeed for deleting offsets with topic %s group %s\n", strings.Join(o.topics, ", "), o.groups[0])
	}
	fmt.Fprint(stdout, formatDeleteOffsets(rows))
	return nil
}

// topicPartitions resolves --topic values: "t" is every partition of t,
// "t:0,2" those partitions.
func topicPartitions(ctx context.Context, adm *kadm.Client, specs []string) (kadm.TopicsSet, error) {
	set := kadm.TopicsSet{}
	var whole []string
	for _, s := range specs {
		topic, parts, found := strings.Cut(s, ":")
		if !found {
			whole = append(whole, topic)
			continue
		}
		for _, p := range strings.Split(parts, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("invalid partition %q in --topic %s", p, s)
			}
			set.Add(topic, int32(n))
		}
	}
	if len(whole) > 0 {
		td, err := adm.ListTopics(ctx, whole...)
		if err != nil {
			return nil, err
		}
		for _, t := range whole {
			d := td[t]
			if d.Err != nil {
				return nil, fmt.Errorf("topic %s: %w", t, d.Err)
			}
			for p := range d.Partitions {
				set.Add(t, p)
			}
		}
	}
	return set, nil
}

// parseDatetime reads --to-datetime (Kafka's formats: with or without
// milliseconds and a zone; UTC when none).
func parseDatetime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05.000", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid --to-datetime %q (want YYYY-MM-DDTHH:mm:SS.sss)", s)
}

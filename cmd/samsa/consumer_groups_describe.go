package main

// --describe and --reset-offsets of samsa consumer-groups.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

func describeGroupsCmd(ctx context.Context, adm *kadm.Client, o *groupsOpts, groups []string, stdout io.Writer) error {
	dg, err := adm.DescribeGroups(ctx, groups...)
	if err != nil {
		return err
	}
	for _, id := range groups {
		g := dg[id]
		if g.Err != nil {
			return g.Err
		}
		if g.State == "Dead" {
			fmt.Fprintf(stdout, "Error: Consumer group '%s' does not exist.\n", id)
			continue
		}
		switch {
		case o.has["members"]:
			if len(g.Members) == 0 {
				fmt.Fprintf(stdout, "\nConsumer group '%s' has no active members.\n", id)
				continue
			}
			fmt.Fprint(stdout, formatMembers(memberRows(g), o.has["verbose"]))
		case o.has["state"]:
			c := g.Coordinator
			fmt.Fprint(stdout, formatState([]stateRow{{Group: id, State: g.State, Strategy: g.Protocol, Members: len(g.Members),
				Coordinator: fmt.Sprintf("%s:%d (%d)", c.Host, c.Port, c.NodeID)}}))
		default:
			rows, err := offsetRows(ctx, adm, g)
			if err != nil {
				return err
			}
			if len(g.Members) == 0 {
				fmt.Fprintf(stdout, "\nConsumer group '%s' has no active members.\n", id)
			}
			fmt.Fprint(stdout, formatOffsets(rows))
		}
	}
	return nil
}

func memberRows(g kadm.DescribedGroup) []memberRow {
	var rows []memberRow
	for _, m := range g.Members {
		r := memberRow{Group: g.Group, ConsumerID: m.MemberID, Host: m.ClientHost, ClientID: m.ClientID}
		if a, ok := m.Assigned.AsConsumer(); ok {
			var parts []string
			for _, t := range a.Topics {
				r.Partitions += len(t.Partitions)
				ps := make([]string, len(t.Partitions))
				for i, p := range t.Partitions {
					ps[i] = strconv.Itoa(int(p))
				}
				parts = append(parts, t.Topic+"("+strings.Join(ps, ",")+")")
			}
			r.Assignment = strings.Join(parts, ",")
		}
		if r.Assignment == "" {
			r.Assignment = "-"
		}
		rows = append(rows, r)
	}
	return rows
}

// offsetRows joins the group's committed offsets, the log end offsets and
// the members' assignments, as --describe shows them.
func offsetRows(ctx context.Context, adm *kadm.Client, g kadm.DescribedGroup) ([]offsetRow, error) {
	committed, err := adm.FetchOffsets(ctx, g.Group)
	if err != nil {
		return nil, err
	}
	type tp struct {
		t string
		p int32
	}
	rows := map[tp]*offsetRow{}
	get := func(t string, p int32) *offsetRow {
		k := tp{t, p}
		if rows[k] == nil {
			rows[k] = &offsetRow{Group: g.Group, Topic: t, Partition: p, Current: -1, End: -1, ConsumerID: "-", Host: "-", ClientID: "-"}
		}
		return rows[k]
	}
	for _, m := range g.Members {
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				for _, p := range t.Partitions {
					r := get(t.Topic, p)
					r.ConsumerID, r.Host, r.ClientID = m.MemberID, m.ClientHost, m.ClientID
				}
			}
		}
	}
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			get(o.Topic, o.Partition).Current = o.At
		}
	})
	var topics []string
	for k := range rows {
		if !slices.Contains(topics, k.t) {
			topics = append(topics, k.t)
		}
	}
	if len(topics) > 0 {
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return nil, err
		}
		ends.Each(func(o kadm.ListedOffset) {
			if r := rows[tp{o.Topic, o.Partition}]; r != nil && o.Err == nil {
				r.End = o.Offset
			}
		})
	}
	out := make([]offsetRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b offsetRow) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out, nil
}

func resetOffsetsCmd(ctx context.Context, adm *kadm.Client, o *groupsOpts, groups []string, stdout io.Writer) error {
	execute := o.has["execute"]
	if !execute && !o.has["dry-run"] {
		fmt.Fprintln(stdout, "WARN: No action will be performed as the --execute option is missing. "+
			"You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.")
	}
	dg, err := adm.DescribeGroups(ctx, groups...)
	if err != nil {
		return err
	}
	for _, id := range groups {
		if st := dg[id].State; st != "Empty" && st != "Dead" && st != "" {
			return fmt.Errorf("Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", id, st)
		}
		rows, offsets, err := planReset(ctx, adm, o, id)
		if err != nil {
			return err
		}
		if execute {
			res, err := adm.CommitOffsets(ctx, id, offsets)
			if err != nil {
				return err
			}
			if err := res.Error(); err != nil {
				return err
			}
		}
		fmt.Fprint(stdout, formatReset(rows))
	}
	return nil
}

// planReset computes the new offsets of one group.
func planReset(ctx context.Context, adm *kadm.Client, o *groupsOpts, id string) ([]resetRow, kadm.Offsets, error) {
	committed, err := adm.FetchOffsets(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var set kadm.TopicsSet
	if o.has["all-topics"] {
		set = kadm.TopicsSet{}
		committed.Each(func(r kadm.OffsetResponse) { set.Add(r.Topic, r.Partition) })
	} else if set, err = topicPartitions(ctx, adm, o.topics); err != nil {
		return nil, nil, err
	}
	topics := set.Topics()
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, err
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, err
	}
	var at kadm.ListedOffsets
	if o.has["to-datetime"] {
		ts, err := parseDatetime(o.last("to-datetime"))
		if err != nil {
			return nil, nil, err
		}
		if at, err = adm.ListOffsetsAfterMilli(ctx, ts.UnixMilli(), topics...); err != nil {
			return nil, nil, err
		}
	}
	var rows []resetRow
	offsets := kadm.Offsets{}
	for _, t := range set.Sorted() {
		for _, p := range t.Partitions {
			s, _ := starts.Lookup(t.Topic, p)
			e, _ := ends.Lookup(t.Topic, p)
			cur, ok := committed.Lookup(t.Topic, p)
			current := e.Offset
			if ok && cur.At >= 0 {
				current = cur.At
			}
			n, err := newOffset(o, s.Offset, e.Offset, current, at, t.Topic, p)
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, resetRow{Group: id, Topic: t.Topic, Partition: p, Offset: n})
			offsets.Add(kadm.Offset{Topic: t.Topic, Partition: p, At: n, LeaderEpoch: -1})
		}
	}
	return rows, offsets, nil
}

// newOffset is one partition's target, clamped to [start, end] as Kafka's
// tool does.
func newOffset(o *groupsOpts, start, end, current int64, at kadm.ListedOffsets, topic string, p int32) (int64, error) {
	clamp := func(v int64) int64 { return min(max(v, start), end) }
	switch {
	case o.has["to-earliest"]:
		return start, nil
	case o.has["to-latest"]:
		return end, nil
	case o.has["to-current"]:
		return current, nil
	case o.has["to-offset"]:
		v, err := strconv.ParseInt(o.last("to-offset"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid --to-offset %q", o.last("to-offset"))
		}
		return clamp(v), nil
	case o.has["shift-by"]:
		v, err := strconv.ParseInt(o.last("shift-by"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid --shift-by %q", o.last("shift-by"))
		}
		return clamp(current + v), nil
	}
	if l, ok := at.Lookup(topic, p); ok && l.Err == nil && l.Offset >= 0 {
		return clamp(l.Offset), nil
	}
	return end, nil
}

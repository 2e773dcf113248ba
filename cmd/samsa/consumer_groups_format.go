package main

// The output of samsa consumer-groups, as kafka-consumer-groups.sh prints
// it (Kafka 3.x ConsumerGroupCommand): a blank line, then left-aligned
// columns whose widths follow the longest group, topic, consumer id and
// host; "-" where a value is unknown. Pure functions, tested in
// consumer_groups_test.go.

import (
	"fmt"
	"strings"
)

// offsetRow is one partition of --describe (offsets).
type offsetRow struct {
	Group, Topic               string
	Partition                  int32
	Current, End               int64  // -1: unknown
	ConsumerID, Host, ClientID string // "-" when unassigned
}

func dash(v int64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprint(v)
}

func widest(min int, vals ...string) int {
	w := min
	for _, v := range vals {
		w = max(w, len(v))
	}
	return w
}

// formatOffsets is --describe's table.
func formatOffsets(rows []offsetRow) string {
	gw, tw, cw, hw := 5, 5, 11, 4
	for _, r := range rows {
		gw, tw, cw, hw = widest(gw, r.Group), widest(tw, r.Topic), widest(cw, r.ConsumerID), widest(hw, r.Host)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s %-*s %-10s %-15s %-15s %-15s %-*s %-*s %s\n", gw, "GROUP", tw, "TOPIC", "PARTITION",
		"CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", cw, "CONSUMER-ID", hw, "HOST", "CLIENT-ID")
	for _, r := range rows {
		lag := int64(-1)
		if r.Current >= 0 && r.End >= 0 {
			lag = r.End - r.Current
		}
		fmt.Fprintf(&b, "%-*s %-*s %-10d %-15s %-15s %-15s %-*s %-*s %s\n", gw, r.Group, tw, r.Topic, r.Partition,
			dash(r.Current), dash(r.End), dash(lag), cw, r.ConsumerID, hw, r.Host, r.ClientID)
	}
	return b.String()
}

// memberRow is one member of --describe --members.
type memberRow struct {
	Group, ConsumerID, Host, ClientID string
	Partitions                        int
	Assignment                        string // --verbose only
}

func formatMembers(rows []memberRow, verbose bool) string {
	gw, cw, hw, iw := 5, 11, 4, 9
	for _, r := range rows {
		gw, cw, hw, iw = widest(gw, r.Group), widest(cw, r.ConsumerID), widest(hw, r.Host), widest(iw, r.ClientID)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s %-*s %-*s %-*s %-12s", gw, "GROUP", cw, "CONSUMER-ID", hw, "HOST", iw, "CLIENT-ID", "#PARTITIONS")
	if verbose {
		b.WriteString(" ASSIGNMENT")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s %-*s %-*s %-*s %-12d", gw, r.Group, cw, r.ConsumerID, hw, r.Host, iw, r.ClientID, r.Partitions)
		if verbose {
			b.WriteString(" " + r.Assignment)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// stateRow is one group of --describe --state.
type stateRow struct {
	Group, Coordinator, Strategy, State string
	Members                             int
}

func formatState(rows []stateRow) string {
	gw, cw := 5, 16
	for _, r := range rows {
		gw, cw = widest(gw, r.Group), widest(cw, r.Coordinator)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s %-*s %-20s %-20s %s\n", gw, "GROUP", cw, "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s %-*s %-20s %-20s %d\n", gw, r.Group, cw, r.Coordinator, r.Strategy, r.State, r.Members)
	}
	return b.String()
}

// resetRow is one partition of --reset-offsets.
type resetRow struct {
	Group, Topic string
	Partition    int32
	Offset       int64
}

func formatReset(rows []resetRow) string {
	gw, tw := 5, 5
	for _, r := range rows {
		gw, tw = widest(gw, r.Group), widest(tw, r.Topic)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s %-*s %-10s %s\n", gw, "GROUP", tw, "TOPIC", "PARTITION", "NEW-OFFSET")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s %-*s %-10d %d\n", gw, r.Group, tw, r.Topic, r.Partition, r.Offset)
	}
	return b.String()
}

// deleteOffsetRow is one partition of --delete-offsets.
type deleteOffsetRow struct {
	Topic     string
	Partition int32
	Status    string // "Successful" or the error
}

func formatDeleteOffsets(rows []deleteOffsetRow) string {
	tw := 5
	for _, r := range rows {
		tw = widest(tw, r.Topic)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-*s %-10s %s\n", tw, "TOPIC", "PARTITION", "STATUS")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s %-10d %s\n", tw, r.Topic, r.Partition, r.Status)
	}
	return b.String()
}

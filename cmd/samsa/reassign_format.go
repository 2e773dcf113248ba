package main

// Output of samsa reassign-partitions, line for line as Kafka's
// ReassignPartitionsCommand prints it (formatAsReassignmentJson,
// currentPartitionReplicaAssignmentToString, partitionReassignmentStatesToString,
// curReassignmentsToString). Partitions are named "topic-partition" and
// sorted by topic, then partition number. Pure functions.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// partitionErrors lists "t-0: <message>" for each refused partition, sorted.
func partitionErrors(resp kadm.AlterPartitionAssignmentsResponses) []string {
	var out []string
	for _, r := range resp.Sorted() {
		if r.Err != nil {
			msg := r.ErrMessage
			out = append(out, fmt.Sprintf("%s-%d: %s", r.Topic, r.Partition, errorText(&kafkaError{err: r.Err, msg: &msg})))
		}
	}
	return out
}

// reassignmentEntry is one partition of Kafka's reassignment JSON, with
// its key order.
type reassignmentEntry struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs"`
}

// formatReassignmentJSON is Kafka's formatAsReassignmentJson: partitions
// sorted, every log dir "any".
func formatReassignmentJSON(assignment map[string][]int32) string {
	tps := make([]string, 0, len(assignment))
	for tp := range assignment {
		tps = append(tps, tp)
	}
	sortTPStrings(tps)
	entries := []reassignmentEntry{}
	for _, tp := range tps {
		i := strings.LastIndex(tp, "-")
		var p int32
		fmt.Sscan(tp[i+1:], &p)
		dirs := make([]string, len(assignment[tp]))
		for j := range dirs {
			dirs[j] = "any"
		}
		entries = append(entries, reassignmentEntry{Topic: tp[:i], Partition: p, Replicas: assignment[tp], LogDirs: dirs})
	}
	b, _ := json.Marshal(struct {
		Version    int                 `json:"version"`
		Partitions []reassignmentEntry `json:"partitions"`
	}{1, entries})
	return string(b)
}

// formatRollback is --execute's first block.
func formatRollback(current map[string][]int32) string {
	return "Current partition replica assignment\n\n" + formatReassignmentJSON(current) +
		"\n\nSave this to use as the --reassignment-json-file option during rollback"
}

func startedLine(moves []partitionMove) string {
	tps := make([]string, len(moves))
	for i, m := range moves {
		tps[i] = m.tp()
	}
	sortTPStrings(tps)
	return fmt.Sprintf("Successfully started partition reassignment%s for %s", plural(len(tps)), strings.Join(tps, ","))
}

// formatVerify is --verify's status block: a partition is done when no
// reassignment of it is in progress.
func formatVerify(moves []partitionMove, current map[string][]int32, ongoing map[string]kadm.ListPartitionReassignmentsResponse) string {
	byTP := map[string]partitionMove{}
	var tps []string
	for _, m := range moves {
		byTP[m.tp()] = m
		tps = append(tps, m.tp())
	}
	sortTPStrings(tps)
	lines := []string{"Status of partition reassignment:"}
	for _, tp := range tps {
		_, inProgress := ongoing[tp]
		switch target := byTP[tp].Replicas; {
		case inProgress:
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is still in progress.", tp))
		case slices.Equal(current[tp], target):
			lines = append(lines, fmt.Sprintf("Reassignment of partition %s is completed.", tp))
		default:
			lines = append(lines, fmt.Sprintf("There is no active reassignment of partition %s, but replica set is %s rather than %s.",
				tp, joinInt32(current[tp]), joinInt32(target)))
		}
	}
	return strings.Join(lines, "\n")
}

// formatReassignmentList is --list's output.
func formatReassignmentList(all map[string]kadm.ListPartitionReassignmentsResponse) string {
	if len(all) == 0 {
		return "No partition reassignments found."
	}
	var tps []string
	for tp := range all {
		tps = append(tps, tp)
	}
	sortTPStrings(tps)
	lines := []string{"Current partition reassignments:"}
	for _, tp := range tps {
		r := all[tp]
		line := fmt.Sprintf("%s: replicas: %s.", tp, joinInt32(r.Replicas))
		if len(r.AddingReplicas) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinInt32(r.AddingReplicas))
		}
		if len(r.RemovingReplicas) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinInt32(r.RemovingReplicas))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// sortTPStrings sorts "topic-partition" names by topic, then partition
// number (Kafka's compareTopicPartitions).
func sortTPStrings(tps []string) {
	slices.SortFunc(tps, func(a, b string) int {
		i, j := strings.LastIndex(a, "-"), strings.LastIndex(b, "-")
		if c := strings.Compare(a[:i], b[:j]); c != 0 {
			return c
		}
		var pa, pb int
		fmt.Sscan(a[i+1:], &pa)
		fmt.Sscan(b[j+1:], &pb)
		return pa - pb
	})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

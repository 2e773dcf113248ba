package main

// Command line and JSON files of samsa reassign-partitions, checked as
// Kafka's ReassignPartitionsCommand does (validateAndParseArgs,
// parsePartitionReassignmentData, parseExecuteAssignmentArgs,
// parseGenerateAssignmentArgs), with its messages. Pure functions.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

const reassignAbout = "This tool helps to move topic partitions between replicas."

const reassignUsage = `Option                                  Description
------                                  -----------
--additional                            Execute this reassignment in addition to any other ongoing ones.
--bootstrap-server <String>             REQUIRED: the server(s) to use for bootstrapping.
--broker-list <String: brokerlist>      The list of brokers to which the partitions need to be reassigned
                                          in the form "0,1,2". This is required if --topics-to-move-json-
                                          file is used to generate reassignment configuration
--cancel                                Cancel an active reassignment.
--disable-rack-aware                    Disable rack aware replica assignment
--execute                               Kick off the reassignment as specified by the --reassignment-json-
                                          file option.
--generate                              Generate a candidate partition reassignment configuration. Note
                                          that this only generates a candidate assignment, it does not
                                          execute it.
--help                                  Print usage information.
--list                                  List all active partition reassignments.
--reassignment-json-file <String>       The JSON file with the partition reassignment configuration. The
                                          format to use is -
                                        {"partitions":
                                          [{"topic": "foo", "partition": 1, "replicas": [1,2,3],
                                            "log_dirs": ["any","any","any"] }],
                                         "version":1}
--topics-to-move-json-file <String>     Generate a reassignment configuration to move the partitions of the
                                          specified topics to the list of brokers specified by the
                                          --broker-list option. The format to use is -
                                        {"topics": [{"topic": "foo"},{"topic": "foo1"}], "version":1}
--verify                                Verify if the reassignment completed as specified by the
                                          --reassignment-json-file option.
`

// reassignFlags are the tool's options; true if they take a value.
var reassignFlags = map[string]bool{
	"bootstrap-server": true, "command-config": true, "reassignment-json-file": true,
	"topics-to-move-json-file": true, "broker-list": true, "throttle": true,
	"replica-alter-log-dirs-throttle": true, "timeout": true,
	"generate": false, "execute": false, "verify": false, "cancel": false, "list": false,
	"disable-rack-aware": false, "additional": false, "preserve-throttles": false, "help": false, "version": false,
}

var reassignActions = []string{"generate", "execute", "verify", "cancel", "list"}

// reassignOpts is a parsed, checked command line.
type reassignOpts struct {
	action           string
	bootstrap        string
	jsonFile         string // --reassignment-json-file
	topicsFile       string // --topics-to-move-json-file
	brokers          []int32
	disableRackAware bool
	additional       bool
	ignored          []string // accepted options samsa does not act on
}

func parseReassignArgs(args []string) (*reassignOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{reassignAbout, 1}
	}
	vals, err := scanOptions(args, reassignFlags)
	if err != nil {
		return nil, &usageError{err.Error(), 1}
	}
	has := func(k string) bool { _, ok := vals[k]; return ok }
	last := func(k string) string { v := vals[k]; return v[len(v)-1] }
	if has("help") {
		return nil, &usageError{reassignAbout, 0}
	}
	if has("version") {
		return nil, &usageError{"samsa " + version, 0}
	}
	var actions []string
	for _, a := range reassignActions {
		if has(a) {
			actions = append(actions, a)
		}
	}
	if len(actions) != 1 {
		return nil, &usageError{"Command must include exactly one action: --generate, --execute, --verify, --cancel, --list", 1}
	}
	o := &reassignOpts{action: actions[0]}
	if !has("bootstrap-server") {
		return nil, &usageError{"Please specify --bootstrap-server", 1}
	}
	required := map[string][]string{"verify": {"reassignment-json-file"}, "execute": {"reassignment-json-file"},
		"cancel": {"reassignment-json-file"}, "generate": {"topics-to-move-json-file", "broker-list"}}
	for _, k := range required[o.action] {
		if !has(k) {
			return nil, &usageError{fmt.Sprintf("Missing required argument \"[%s]\"", k), 1}
		}
	}
	allowed := map[string][]string{
		"generate": {"topics-to-move-json-file", "broker-list", "disable-rack-aware"},
		"execute":  {"reassignment-json-file", "additional", "throttle", "replica-alter-log-dirs-throttle", "timeout"},
		"verify":   {"reassignment-json-file", "preserve-throttles"},
		"cancel":   {"reassignment-json-file", "preserve-throttles", "timeout"},
		"list":     nil,
	}
	for _, k := range []string{"reassignment-json-file", "topics-to-move-json-file", "broker-list", "disable-rack-aware",
		"additional", "throttle", "replica-alter-log-dirs-throttle", "timeout", "preserve-throttles"} {
		if has(k) && !slices.Contains(allowed[o.action], k) {
			return nil, &usageError{fmt.Sprintf("Option \"[%s]\" can't be used with option \"[%s]\"", k, o.action), 1}
		}
	}
	o.bootstrap = last("bootstrap-server")
	if has("reassignment-json-file") {
		o.jsonFile = last("reassignment-json-file")
	}
	if has("topics-to-move-json-file") {
		o.topicsFile = last("topics-to-move-json-file")
	}
	if has("broker-list") {
		for _, s := range strings.Split(last("broker-list"), ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("For input string: %q", s)
			}
			o.brokers = append(o.brokers, int32(id))
		}
	}
	o.disableRackAware, o.additional = has("disable-rack-aware"), has("additional")
	for _, k := range []string{"command-config", "throttle", "replica-alter-log-dirs-throttle", "preserve-throttles"} {
		if has(k) {
			o.ignored = append(o.ignored, k)
		}
	}
	return o, nil
}

// partitionMove is one entry of a reassignment file.
type partitionMove struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs"`
}

func (m partitionMove) tp() string { return fmt.Sprintf("%s-%d", m.Topic, m.Partition) }

// parseReassignmentJSON reads a reassignment file (version 1), in file order.
func parseReassignmentJSON(data []byte) ([]partitionMove, error) {
	var doc struct {
		Version    *int `json:"version"`
		Partitions []struct {
			Topic     *string  `json:"topic"`
			Partition *int32   `json:"partition"`
			Replicas  *[]int32 `json:"replicas"`
			LogDirs   []string `json:"log_dirs"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, errors.New("The input string is not a valid JSON")
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", *doc.Version)
	}
	var out []partitionMove
	for _, p := range doc.Partitions {
		switch {
		case p.Topic == nil:
			return nil, errors.New("Missing required field 'topic'")
		case p.Partition == nil:
			return nil, errors.New("Missing required field 'partition'")
		case p.Replicas == nil:
			return nil, errors.New("Missing required field 'replicas'")
		}
		m := partitionMove{Topic: *p.Topic, Partition: *p.Partition, Replicas: *p.Replicas, LogDirs: p.LogDirs}
		if m.LogDirs == nil {
			m.LogDirs = make([]string, len(m.Replicas))
			for i := range m.LogDirs {
				m.LogDirs[i] = "any"
			}
		}
		if len(m.LogDirs) != len(m.Replicas) {
			return nil, fmt.Errorf("Size of replicas list %v is different from size of log dirs list %v for partition %s",
				idsText(m.Replicas), m.LogDirs, m.tp())
		}
		if slices.ContainsFunc(m.LogDirs, func(d string) bool { return d != "any" }) {
			return nil, fmt.Errorf("Moving replicas between log directories is not supported: log_dirs of %s must be \"any\"", m.tp())
		}
		out = append(out, m)
	}
	return out, nil
}

// checkExecuteMoves is parseExecuteAssignmentArgs' validation.
func checkExecuteMoves(moves []partitionMove) error {
	if len(moves) == 0 {
		return errors.New("Partition reassignment list cannot be empty")
	}
	seen := map[string]int{}
	var dups, dupReplicas []string
	for _, m := range moves {
		if len(m.Replicas) == 0 {
			return errors.New("Partition replica list cannot be empty")
		}
		if seen[m.tp()]++; seen[m.tp()] == 2 {
			dups = append(dups, m.tp())
		}
	}
	if len(dups) > 0 {
		return fmt.Errorf("Partition reassignment contains duplicate topic partitions: %s", strings.Join(dups, ","))
	}
	for _, m := range moves {
		if d := duplicateIDs(m.Replicas); len(d) > 0 {
			dupReplicas = append(dupReplicas, fmt.Sprintf("%s contains multiple entries for %s", m.tp(), joinInt32(d)))
		}
	}
	if len(dupReplicas) > 0 {
		return fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dupReplicas, ". "))
	}
	return nil
}

func duplicateIDs(ids []int32) []int32 {
	var out []int32
	count := map[int32]int{}
	for _, id := range ids {
		if count[id]++; count[id] == 2 {
			out = append(out, id)
		}
	}
	return out
}

func idsText(ids []int32) string { return "[" + strings.ReplaceAll(joinInt32(ids), ",", ", ") + "]" }

// parseTopicsToMove reads --topics-to-move-json-file and checks it with the
// broker list (parseGenerateAssignmentArgs).
func parseTopicsToMove(data []byte, brokers []int32) ([]string, error) {
	var doc struct {
		Topics []struct {
			Topic string `json:"topic"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, errors.New("The input string is not a valid JSON")
	}
	if d := duplicateIDs(brokers); len(d) > 0 {
		return nil, fmt.Errorf("Broker list contains duplicate entries: %s", joinInt32(d))
	}
	var topics, dups []string
	for _, t := range doc.Topics {
		if slices.Contains(topics, t.Topic) && !slices.Contains(dups, t.Topic) {
			dups = append(dups, t.Topic)
		}
		topics = append(topics, t.Topic)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("List of topics to reassign contains duplicate entries: %s", strings.Join(dups, ","))
	}
	return topics, nil
}

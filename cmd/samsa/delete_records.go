package main

// samsa delete-records: kafka-delete-records.sh (Kafka's
// DeleteRecordsCommand) over the Kafka protocol, through kadm's
// DeleteRecords. --bootstrap-server and --offset-json-file
// ({"partitions": [{"topic": "foo", "partition": 1, "offset": 1}],
// "version": 1}; offset -1 means the high watermark) are required;
// --command-config is accepted and ignored with a warning.
//
// Output as Kafka's tool: "Executing records delete operation", "Records
// delete operation completed:", then per partition "partition: t-0\t
// low_watermark: N" or "partition: t-0\terror: <Java exception>" (sorted
// here; Kafka prints in hash order). Exit code 0 even when partitions
// failed, as Kafka's. Mistakes on the command line and in the file print
// Kafka's message to stderr and exit 1. Parsing and formatting are pure
// functions (delete_records_test.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

const deleteRecordsAbout = "This tool helps to delete records of the given partitions down to the specified offset."

const deleteRecordsUsage = `Option                                 Description
------                                 -----------
--bootstrap-server <String: server(s)  REQUIRED: The server to connect to.
  to use for bootstrapping>
--command-config <String: command      A property file containing configs to
  config property file path>             be passed to Admin Client.
--help                                 Print usage information.
--offset-json-file <String: Offset     REQUIRED: The JSON file with offset
  json file path>                        per partition. The format to use is:
                                       {"partitions":
                                         [{"topic": "foo", "partition": 1,
                                         "offset": 1}],
                                        "version":1
                                       }
--version                              Display Kafka version.
`

var deleteRecordsFlags = map[string]bool{
	"bootstrap-server": true, "offset-json-file": true, "command-config": true, "help": false, "version": false,
}

// deleteRecordsTimeout is the admin client's default.api.timeout.ms.
const deleteRecordsTimeout = 60 * time.Second

func runDeleteRecords(args []string) error { return runTool(deleteRecordsMain, args) }

func deleteRecordsMain(args []string, stdout, stderr io.Writer) int {
	bootstrap, file, err := parseDeleteRecordsArgs(args, stderr)
	if code, ok := printUsageError(err, deleteRecordsUsage, stdout, stderr); ok {
		return code
	}
	var offsets kadm.Offsets
	if err == nil {
		var data []byte
		if data, err = os.ReadFile(file); err == nil {
			offsets, err = parseDeleteRecordsJSON(data)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	fmt.Fprintln(stdout, "Executing records delete operation")
	ctx, cancel := context.WithTimeout(context.Background(), deleteRecordsTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).DeleteRecords(ctx, offsets)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	fmt.Fprint(stdout, formatDeleteRecords(res))
	return 0
}

// parseDeleteRecordsArgs returns the bootstrap servers and the file.
func parseDeleteRecordsArgs(args []string, stderr io.Writer) (bootstrap, file string, err error) {
	if len(args) == 0 {
		return "", "", &usageError{deleteRecordsAbout, 1}
	}
	vals, err := scanOptions(args, deleteRecordsFlags)
	if err != nil {
		return "", "", err
	}
	has := func(k string) bool { _, ok := vals[k]; return ok }
	last := func(k string) string { v := vals[k]; return v[len(v)-1] }
	switch {
	case has("help"):
		return "", "", &usageError{deleteRecordsAbout, 0}
	case has("version"):
		return "", "", &usageError{"samsa " + version, 0}
	}
	for _, k := range []string{"bootstrap-server", "offset-json-file"} {
		if !has(k) {
			return "", "", &usageError{fmt.Sprintf("Missing required argument \"[%s]\"", k), 1}
		}
	}
	if has("command-config") {
		fmt.Fprintln(stderr, "WARNING: --command-config is not supported by samsa delete-records and is ignored.")
	}
	return last("bootstrap-server"), last("offset-json-file"), nil
}

// parseDeleteRecordsJSON reads the offset file with Kafka's checks: version
// 1 (the default), a partitions array of topic, partition and offset, no
// partition twice.
func parseDeleteRecordsJSON(data []byte) (kadm.Offsets, error) {
	var doc struct {
		Version    *int `json:"version"`
		Partitions *[]struct {
			Topic     *string `json:"topic"`
			Partition *int32  `json:"partition"`
			Offset    *int64  `json:"offset"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("The input string is not a valid JSON: %v", err)
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", *doc.Version)
	}
	if doc.Partitions == nil {
		return nil, errors.New("Missing partitions field")
	}
	offsets := kadm.Offsets{}
	seen := map[kafka.TopicPartition]int{}
	for _, p := range *doc.Partitions {
		if p.Topic == nil || p.Partition == nil || p.Offset == nil {
			return nil, errors.New("Each partition needs topic, partition and offset fields")
		}
		tp := kafka.TopicPartition{Topic: *p.Topic, Partition: *p.Partition}
		seen[tp]++
		offsets.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: *p.Offset, LeaderEpoch: -1})
	}
	var dups []string
	for tp, n := range seen {
		if n > 1 {
			dups = append(dups, tp.String())
		}
	}
	if len(dups) > 0 {
		slices.Sort(dups)
		return nil, fmt.Errorf("Offset json file contains duplicate topic partitions: %s", strings.Join(dups, ","))
	}
	return offsets, nil
}

// formatDeleteRecords is the tool's report of the results, sorted.
func formatDeleteRecords(res kadm.DeleteRecordsResponses) string {
	var b strings.Builder
	b.WriteString("Records delete operation completed:\n")
	for _, r := range res.Sorted() {
		if r.Err != nil {
			fmt.Fprintf(&b, "partition: %s-%d\terror: %s\n", r.Topic, r.Partition, javaException(r.Err, ""))
			continue
		}
		fmt.Fprintf(&b, "partition: %s-%d\tlow_watermark: %d\n", r.Topic, r.Partition, r.LowWatermark)
	}
	return b.String()
}

package main

// samsa leader-election: kafka-leader-election.sh (Kafka's
// LeaderElectionCommand) over the Kafka protocol, through kadm's
// ElectLeaders. --election-type preferred|unclean (any case) and exactly
// one of --all-topic-partitions, --topic T --partition P, or
// --path-to-json-file F ({"partitions": [{"topic": "t", "partition": 0}]}).
//
// Output and exit codes follow Kafka's tool: elected partitions are printed
// as "Successfully completed leader election (PREFERRED) for partitions
// t-0, t-1", those whose leader was already right as "Valid replica already
// elected for partitions …" (an --all-topic-partitions answer leaves them
// out), and each failure as "Error completing leader election (PREFERRED)
// for partition: t-1: <Java exception>: <message>" on stdout, then "N
// replica(s) could not be elected" on stderr and exit 1. Mistakes on the
// command line print the message to stderr and exit 1 (no arguments: the
// usage too; --help: the usage on stdout, exit 0, as samsa topics).
// Partitions are printed sorted. Parsing and formatting are pure functions
// (leader_election_test.go).

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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// electionTimeout is the tool's default.api.timeout.ms (30 s).
const electionTimeout = 30 * time.Second

const electionAbout = "This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas."

const electionUsage = `Option                                  Description
------                                  -----------
--admin.config <String: config file>    Configuration properties files to pass to the admin client
--all-topic-partitions                  Perform election on all of the eligible topic partitions based on the
                                          type of election (see the --election-type flag). Not allowed if
                                          --topic or --path-to-json-file is specified.
--bootstrap-server <String: host:port>  A hostname and port for the broker to connect to, in the form
                                          host:port. Multiple comma separated URLs can be given. REQUIRED.
--election-type <[PREFERRED,UNCLEAN]:   Type of election to attempt. Possible values are "preferred" for
  election type>                          preferred leader election or "unclean" for unclean leader
                                          election. If preferred election is selection, the election is
                                          only performed if the current leader is not the preferred leader
                                          for the topic partition. If unclean election is selected, the
                                          election is only performed if there are no leader for the topic
                                          partition. REQUIRED.
--help                                  Print usage information.
--partition <Integer: partition id>     Partition id for which to perform an election. REQUIRED if --topic
                                          is specified.
--path-to-json-file <String: Path to    The JSON file with the list of partition for which leader elections
  JSON file>                              should be performed. This is an example format.
                                          {"partitions":
                                          	[{"topic": "foo", "partition": 1},
                                          	 {"topic": "foobar", "partition": 2}]
                                          }
                                          Not allowed if --all-topic-partitions or --topic flags are specified.
--topic <String: topic name>            Name of topic for which to perform an election. Not allowed if
                                          --path-to-json-file or --all-topic-partitions is specified.
`

// electionFlags are the tool's options; true if they take a value.
var electionFlags = map[string]bool{
	"bootstrap-server": true, "admin.config": true, "path-to-json-file": true, "topic": true,
	"partition": true, "election-type": true, "all-topic-partitions": false, "help": false, "version": false,
}

// electionOpts is a parsed, checked command line.
type electionOpts struct {
	bootstrap   string
	adminConfig string
	how         kadm.ElectLeadersHow
	all         bool
	topic       string
	partition   int32
	jsonFile    string
}

func runLeaderElection(args []string) error { return runTool(leaderElectionMain, args) }

// leaderElectionMain runs the command and returns its exit code.
func leaderElectionMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseElectionArgs(args)
	if code, ok := printUsageError(err, electionUsage, stdout, stderr); ok {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	if o.adminConfig != "" {
		fmt.Fprintln(stderr, "WARNING: --admin.config is not supported by samsa leader-election and is ignored.")
	}
	var set kadm.TopicsSet // nil: every partition
	if !o.all {
		tps, err := o.partitions()
		if err != nil {
			fmt.Fprintln(stderr, err.Error())
			return 1
		}
		if len(tps) == 0 {
			return 0 // an empty list elects nothing
		}
		set = kadm.TopicsSet{}
		for _, tp := range tps {
			set.Add(tp.Topic, tp.Partition)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), electionTimeout)
	defer cancel()
	results, err := electLeaders(ctx, o, set)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kerr.RequestTimedOut) {
			fmt.Fprintln(stdout, "Timeout waiting for election results")
			fmt.Fprintln(stderr, "Timeout waiting for election results")
			return 1
		}
		fmt.Fprintln(stdout, "Error while making request")
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	out, failed := formatElection(o.how, results)
	fmt.Fprint(stdout, out)
	if failed > 0 {
		fmt.Fprintf(stderr, "%d replica(s) could not be elected\n", failed)
		return 1
	}
	return 0
}

func electLeaders(ctx context.Context, o *electionOpts, set kadm.TopicsSet) (kadm.ElectLeadersResults, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return kadm.NewClient(cl).ElectLeaders(ctx, o.how, set)
}

// partitions is what --topic/--partition or the JSON file name.
func (o *electionOpts) partitions() ([]kafka.TopicPartition, error) {
	if o.jsonFile == "" {
		return []kafka.TopicPartition{{Topic: o.topic, Partition: o.partition}}, nil
	}
	data, err := os.ReadFile(o.jsonFile)
	if err != nil {
		return nil, err
	}
	return parseElectionJSON(data)
}

// parseElectionJSON reads {"partitions": [{"topic": …, "partition": …}]},
// refusing repeated partitions, with Kafka's messages.
func parseElectionJSON(data []byte) ([]kafka.TopicPartition, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, errors.New("Replica election data is empty")
	}
	raw, ok := doc["partitions"]
	if !ok {
		return nil, errors.New(`Replica election data is missing "partitions" field`)
	}
	var entries []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("Expected JSON array of partitions, got %s", raw)
	}
	var out []kafka.TopicPartition
	count := map[kafka.TopicPartition]int{}
	for _, e := range entries {
		var tp kafka.TopicPartition
		for _, f := range []struct {
			name string
			dst  any
		}{{"topic", &tp.Topic}, {"partition", &tp.Partition}} {
			field, dst := f.name, f.dst
			v, ok := e[field]
			if !ok {
				return nil, fmt.Errorf("No such field exists: `%s`", field)
			}
			if err := json.Unmarshal(v, dst); err != nil {
				return nil, fmt.Errorf("Invalid value for field `%s`: %s", field, v)
			}
		}
		out = append(out, tp)
		count[tp]++
	}
	var dups []string
	for tp, n := range count {
		if n > 1 {
			dups = append(dups, tp.String())
		}
	}
	if len(dups) > 0 {
		slices.Sort(dups)
		return nil, fmt.Errorf("Replica election data contains duplicate partitions: [%s]", strings.Join(dups, ", "))
	}
	return out, nil
}

// formatElection is the tool's output for results, and how many failed.
func formatElection(how kadm.ElectLeadersHow, results kadm.ElectLeadersResults) (string, int) {
	var done, noop, failed []kadm.ElectLeadersResult
	for _, ps := range results {
		for _, r := range ps {
			switch {
			case r.Err == nil:
				done = append(done, r)
			case errors.Is(r.Err, kerr.ElectionNotNeeded):
				noop = append(noop, r)
			default:
				failed = append(failed, r)
			}
		}
	}
	typ := "PREFERRED"
	if how == kadm.ElectLiveReplica {
		typ = "UNCLEAN"
	}
	var b strings.Builder
	if len(done) > 0 {
		fmt.Fprintf(&b, "Successfully completed leader election (%s) for partitions %s\n", typ, joinResults(done))
	}
	if len(noop) > 0 {
		fmt.Fprintf(&b, "Valid replica already elected for partitions %s\n", joinResults(noop))
	}
	sortResults(failed)
	for _, r := range failed {
		fmt.Fprintf(&b, "Error completing leader election (%s) for partition: %s-%d: %s\n", typ, r.Topic, r.Partition, javaException(r.Err, r.ErrMessage))
	}
	return b.String(), len(failed)
}

func sortResults(rs []kadm.ElectLeadersResult) {
	slices.SortFunc(rs, func(a, b kadm.ElectLeadersResult) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
}

func joinResults(rs []kadm.ElectLeadersResult) string {
	sortResults(rs)
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%s-%d", r.Topic, r.Partition)
	}
	return strings.Join(s, ", ")
}

// javaExceptions are the exception classes whose names do not follow from
// the error's name.
var javaExceptions = map[string]string{
	"REQUEST_TIMED_OUT":            "TimeoutException",
	"UNKNOWN_SERVER_ERROR":         "UnknownServerException",
	"INVALID_TOPIC_EXCEPTION":      "InvalidTopicException",
	"CLUSTER_AUTHORIZATION_FAILED": "ClusterAuthorizationException",
	"NETWORK_EXCEPTION":            "NetworkException",
}

// javaException prints err as the Java exception Kafka's admin client
// raises for it (Throwable.toString): class, then the broker's message or
// the error's description.
func javaException(err error, msg string) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	class, ok := javaExceptions[ke.Message]
	if !ok {
		var b strings.Builder
		for _, w := range strings.Split(strings.ToLower(ke.Message), "_") {
			if w != "" {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
		class = b.String() + "Exception"
	}
	if msg == "" {
		msg = ke.Description
	}
	return "org.apache.kafka.common.errors." + class + ": " + msg
}

package main

// samsa log-dirs: kafka-log-dirs.sh (Kafka's LogDirsCommand) over the Kafka
// protocol, through kadm's DescribeBrokerLogDirs. --describe and
// --bootstrap-server are required; --broker-list 0,1,2 (default: every
// broker of the cluster) and --topic-list t1,t2 (default: all) narrow it;
// --command-config is accepted and ignored with a warning.
//
// Output as Kafka's tool: "Querying brokers for log directories
// information", "Received log directory information from brokers 0,1,2",
// then one line of JSON with Kafka's keys in the order its tool prints
// them: {"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":
// "t-0","size":0,"offsetLag":0,"isFuture":false}],"error":null,"logDir":
// "/data"}]}],"version":1}. Brokers, dirs and partitions are sorted (Kafka
// prints dirs and partitions in hash order). Brokers in --broker-list that
// the cluster lacks: Kafka's error on stderr, exit 1.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const logDirsAbout = "This tool helps to query log directory usage on the specified brokers."

const logDirsUsage = `Option                                  Description
------                                  -----------
--bootstrap-server <String: The server  REQUIRED: the server(s) to use for
  (s) to use for bootstrapping>           bootstrapping
--broker-list <String: Broker list>     The list of brokers to be queried in
                                          the form "0,1,2". All brokers in the
                                          cluster will be queried if no broker
                                          list is specified (default: )
--command-config <String: Admin client  Property file containing configs to be
  property file>                          passed to Admin Client.
--describe                              Describe the specified log directories
                                          on the specified brokers.
--help                                  Print usage information.
--topic-list <String: Topic list>       The list of topics to be queried in
                                          the form "topic1,topic2,topic3". All
                                          topics will be queried if no topic
                                          list is specified (default: )
--version                               Display Kafka version.
`

var logDirsFlags = map[string]bool{
	"bootstrap-server": true, "broker-list": true, "topic-list": true, "command-config": true,
	"describe": false, "help": false, "version": false,
}

type logDirsOpts struct {
	bootstrap string
	brokers   []int32
	topics    []string
}

func runLogDirs(args []string) error { return runTool(logDirsMain, args) }

func logDirsMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseLogDirsArgs(args, stderr)
	if code, ok := printUsageError(err, logDirsUsage, stdout, stderr); ok {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	cluster := meta.Brokers.NodeIDs()
	slices.Sort(cluster)
	brokers := o.brokers
	if len(brokers) == 0 {
		brokers = cluster
	}
	var missing []int32
	for _, b := range brokers {
		if !slices.Contains(cluster, b) {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "ERROR: The given brokers do not exist from --broker-list: %s. Current existent brokers: %s\n", joinIDs(missing), joinIDs(cluster))
		return 1
	}
	fmt.Fprintln(stdout, "Querying brokers for log directories information")
	all := map[int32]kadm.DescribedLogDirs{}
	for _, b := range brokers {
		if all[b], err = adm.DescribeBrokerLogDirs(ctx, b, nil); err != nil {
			fmt.Fprintln(stderr, err.Error())
			return 1
		}
	}
	fmt.Fprintf(stdout, "Received log directory information from brokers %s\n", joinIDs(brokers))
	fmt.Fprintln(stdout, formatLogDirs(all, o.topics))
	return 0
}

func parseLogDirsArgs(args []string, stderr io.Writer) (*logDirsOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{logDirsAbout, 1}
	}
	vals, err := scanOptions(args, logDirsFlags)
	if err != nil {
		return nil, err
	}
	has := func(k string) bool { _, ok := vals[k]; return ok }
	last := func(k string) string { v := vals[k]; return v[len(v)-1] }
	switch {
	case has("help"):
		return nil, &usageError{logDirsAbout, 0}
	case has("version"):
		return nil, &usageError{"samsa " + version, 0}
	}
	for _, k := range []string{"bootstrap-server", "describe"} {
		if !has(k) {
			return nil, &usageError{fmt.Sprintf("Missing required argument \"[%s]\"", k), 1}
		}
	}
	if has("command-config") {
		fmt.Fprintln(stderr, "WARNING: --command-config is not supported by samsa log-dirs and is ignored.")
	}
	o := &logDirsOpts{bootstrap: last("bootstrap-server")}
	if has("broker-list") {
		for _, s := range strings.Split(last("broker-list"), ",") {
			if s == "" {
				continue
			}
			id, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("For input string: \"%s\"", s)
			}
			if !slices.Contains(o.brokers, int32(id)) {
				o.brokers = append(o.brokers, int32(id))
			}
		}
		slices.Sort(o.brokers)
	}
	if has("topic-list") {
		for _, s := range strings.Split(last("topic-list"), ",") {
			if s != "" {
				o.topics = append(o.topics, s)
			}
		}
	}
	return o, nil
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// The JSON of kafka-log-dirs.sh, fields in its order.
type (
	logDirsJSON struct {
		Brokers []brokerDirsJSON `json:"brokers"`
		Version int              `json:"version"`
	}
	brokerDirsJSON struct {
		Broker  int32        `json:"broker"`
		LogDirs []logDirJSON `json:"logDirs"`
	}
	logDirJSON struct {
		Partitions []dirPartitionJSON `json:"partitions"`
		Error      *string            `json:"error"`
		LogDir     string             `json:"logDir"`
	}
	dirPartitionJSON struct {
		Partition string `json:"partition"`
		Size      int64  `json:"size"`
		OffsetLag int64  `json:"offsetLag"`
		IsFuture  bool   `json:"isFuture"`
	}
)

// formatLogDirs is the tool's JSON line for the dirs of each broker, only
// topics listed (all if none).
func formatLogDirs(all map[int32]kadm.DescribedLogDirs, topics []string) string {
	doc := logDirsJSON{Brokers: []brokerDirsJSON{}, Version: 1}
	ids := make([]int32, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b := brokerDirsJSON{Broker: id, LogDirs: []logDirJSON{}}
		dirs := all[id]
		paths := make([]string, 0, len(dirs))
		for p := range dirs {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		for _, p := range paths {
			d := dirs[p]
			ld := logDirJSON{Partitions: []dirPartitionJSON{}, LogDir: p}
			if d.Err != nil {
				s, _, _ := strings.Cut(javaException(d.Err, "-"), ": ") // the class name, as Kafka's tool
				ld.Error = &s
			}
			for _, dp := range d.Topics.Sorted() {
				if len(topics) > 0 && !slices.Contains(topics, dp.Topic) {
					continue
				}
				ld.Partitions = append(ld.Partitions, dirPartitionJSON{Partition: fmt.Sprintf("%s-%d", dp.Topic, dp.Partition),
					Size: dp.Size, OffsetLag: dp.OffsetLag, IsFuture: dp.IsFuture})
			}
			b.LogDirs = append(b.LogDirs, ld)
		}
		doc.Brokers = append(doc.Brokers, b)
	}
	out, _ := json.Marshal(doc) // plain values: cannot fail
	return string(out)
}

package main

// samsa topics: kafka-topics.sh (Kafka 3.x, --bootstrap-server mode) over
// the Kafka protocol only, through franz-go. Flags, checks, messages, output
// and exit codes follow Kafka's TopicCommand: usage errors print the message
// and the usage to stderr and exit 1; failures print "Error while executing
// topic command : <message>" to stdout and exit 1. Parsing and formatting
// are pure functions (tested in topics_test.go); the rest is thin.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicsTimeout bounds one command, as the admin client's
// default.api.timeout.ms (60 s) does.
const topicsTimeout = 60 * time.Second

func runTopics(args []string) error { return runTool(topicsMain, args) }

// topicsMain runs the command and returns its exit code.
func topicsMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseTopicsArgs(args)
	if code, ok := printUsageError(err, topicsUsage, stdout, stderr); ok {
		return code
	}
	if err != nil {
		fmt.Fprintln(stdout, "Error while executing topic command : "+err.Error())
		return 1
	}
	if o.commandConfig != "" {
		fmt.Fprintln(stderr, "WARNING: --command-config is not supported by samsa topics and is ignored.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), topicsTimeout)
	defer cancel()
	if err := executeTopics(ctx, o, stdout); err != nil {
		fmt.Fprintln(stdout, "Error while executing topic command : "+errorText(err))
		return 1
	}
	return 0
}

func executeTopics(ctx context.Context, o *topicsOpts, stdout io.Writer) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	switch o.action {
	case "create":
		return createTopicCmd(ctx, cl, o, stdout)
	case "alter":
		return alterTopicCmd(ctx, cl, o)
	case "list":
		names, err := matchingTopics(ctx, kadm.NewClient(cl), o)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, formatList(names))
		return nil
	case "describe":
		return describeTopicCmd(ctx, kadm.NewClient(cl), o, stdout)
	default:
		return deleteTopicCmd(ctx, kadm.NewClient(cl), o)
	}
}

func createTopicCmd(ctx context.Context, cl *kgo.Client, o *topicsOpts, stdout io.Writer) error {
	if strings.ContainsAny(o.topic, "._") {
		fmt.Fprintln(stdout, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.")
	}
	req := buildCreateTopics(o)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		err := kerr.ErrorForCode(t.ErrorCode)
		if errors.Is(err, kerr.TopicAlreadyExists) && o.has["if-not-exists"] {
			return nil
		}
		if err != nil {
			return &kafkaError{err: err, msg: t.ErrorMessage}
		}
	}
	fmt.Fprintf(stdout, "Created topic %s.\n", o.topic)
	return nil
}

func alterTopicCmd(ctx context.Context, cl *kgo.Client, o *topicsOpts) error {
	adm := kadm.NewClient(cl)
	names, err := matchingTopics(ctx, adm, o)
	if err != nil || len(names) == 0 {
		return err
	}
	td, err := adm.ListTopicsWithInternal(ctx, names...)
	if err != nil {
		return err
	}
	req := buildCreatePartitions(o, td, names)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return &kafkaError{err: err, msg: t.ErrorMessage}
		}
	}
	return nil
}

func deleteTopicCmd(ctx context.Context, adm *kadm.Client, o *topicsOpts) error {
	names, err := matchingTopics(ctx, adm, o)
	if err != nil || len(names) == 0 {
		return err
	}
	rs, err := adm.DeleteTopics(ctx, names...)
	if err != nil {
		return err
	}
	for _, r := range rs.Sorted() {
		if r.Err != nil {
			return &kafkaError{err: r.Err, msg: &r.ErrMessage}
		}
	}
	return nil
}

func describeTopicCmd(ctx context.Context, adm *kadm.Client, o *topicsOpts, stdout io.Writer) error {
	names, err := matchingTopics(ctx, adm, o)
	if err != nil || len(names) == 0 {
		return err
	}
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return err
	}
	for _, rc := range configs {
		if rc.Err != nil {
			return &kafkaError{err: rc.Err, msg: &rc.ErrMessage}
		}
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return err
	}
	td, err := adm.ListTopicsWithInternal(ctx, names...)
	if err != nil {
		return err
	}
	for _, d := range td {
		if d.Err != nil {
			return d.Err
		}
	}
	fmt.Fprint(stdout, formatDescribe(o.describeFilter(), td, configs, brokers.NodeIDs()))
	return nil
}

// matchingTopics lists the cluster's topics (with internal ones unless
// --exclude-internal), keeps those --topic matches, and insists on a match
// unless --if-exists, as Kafka's getTopics and ensureTopicExists do.
func matchingTopics(ctx context.Context, adm *kadm.Client, o *topicsOpts) ([]string, error) {
	td, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, err
	}
	names, err := filterTopics(td.Names(), isInternalTopic, o.topic, o.topicSet, o.has["exclude-internal"])
	if err != nil {
		return nil, err
	}
	if o.topicSet && o.topic != "" && !o.has["if-exists"] && o.action != "list" && len(names) == 0 {
		return nil, fmt.Errorf("Topic '%s' does not exist as expected", o.topic)
	}
	return names, nil
}

// isInternalTopic is Kafka's Topic.isInternal.
func isInternalTopic(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

// filterTopics applies Kafka's IncludeList: commas become alternatives,
// spaces and surrounding quotes are dropped, and the expression must match
// the whole name (Java's String.matches).
func filterTopics(names []string, internal func(string) bool, pattern string, patternSet, excludeInternal bool) ([]string, error) {
	var re *regexp.Regexp
	if patternSet {
		p := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(pattern), ",", "|"), " ", "")
		p = strings.TrimRight(strings.TrimLeft(p, `"'`), `"'`)
		var err error
		if re, err = regexp.Compile(`^(?:` + p + `)$`); err != nil {
			return nil, fmt.Errorf("%s is an invalid regex.", pattern)
		}
	}
	var out []string
	for _, n := range names {
		if (re == nil || re.MatchString(n)) && !(excludeInternal && internal(n)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// buildCreateTopics is the CreateTopics request for --create; -1 asks for
// the broker's default count or factor.
func buildCreateTopics(o *topicsOpts) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = o.topic, -1, -1
	if o.partitionsSet {
		rt.NumPartitions = o.partitions
	}
	if o.rfSet {
		rt.ReplicationFactor = int16(o.rf)
	}
	if o.assignment != nil {
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for p, rs := range o.assignment {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(p), rs
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
	}
	for _, kv := range o.configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// buildCreatePartitions is the CreatePartitions request for --alter: each
// topic grows to --partitions; a --replica-assignment lists every
// partition, and only the entries past a topic's current count are sent.
func buildCreatePartitions(o *topicsOpts, td kadm.TopicDetails, names []string) *kmsg.CreatePartitionsRequest {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 30000
	for _, n := range names {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = n, o.partitions
		if o.assignment != nil {
			rt.Assignment = []kmsg.CreatePartitionsRequestTopicAssignment{}
			for i := len(td[n].Partitions); i < len(o.assignment); i++ {
				a := kmsg.NewCreatePartitionsRequestTopicAssignment()
				a.Replicas = o.assignment[i]
				rt.Assignment = append(rt.Assignment, a)
			}
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// kafkaError is a protocol error with the broker's message, printed as the
// Java client's exception message would be.
type kafkaError struct {
	err error
	msg *string
}

func (e *kafkaError) Error() string { return errorText(e) }
func (e *kafkaError) Unwrap() error { return e.err }

// errorText is the message Kafka's tool prints for err: the broker's
// message when there is one, else the error code's description.
func errorText(err error) string {
	var ke *kafkaError
	if !errors.As(err, &ke) {
		return err.Error()
	}
	var code *kerr.Error
	if !errors.As(ke.err, &code) {
		return ke.err.Error()
	}
	if ke.msg != nil && *ke.msg != "" {
		return *ke.msg
	}
	return code.Description
}

// formatList is --list's output: one name a line (an empty line when none,
// as Kafka prints).
func formatList(names []string) string {
	return strings.Join(names, "\n") + "\n"
}

// describeFilter says what --describe prints.
type describeFilter struct {
	underReplicated, unavailable, underMinIsr, atMinIsr, withOverrides bool
}

// formatDescribe is --describe's output, as Kafka's TopicCommand prints it:
// per topic a summary line (unless a partition report was asked for, or
// --topics-with-overrides and the topic has none) and then its partitions
// (unless --topics-with-overrides), filtered by the reports asked for.
func formatDescribe(f describeFilter, td kadm.TopicDetails, configs kadm.ResourceConfigs, live []int32) string {
	var b strings.Builder
	describeConfigs := !f.underReplicated && !f.unavailable && !f.underMinIsr && !f.atMinIsr
	for _, d := range td.Sorted() {
		rc, _ := configs.On(d.Topic, nil)
		parts := d.Partitions.Sorted()
		if describeConfigs && (!f.withOverrides || len(overrides(rc)) > 0) {
			b.WriteString(formatTopicLine(d, rc))
		}
		if f.withOverrides {
			continue
		}
		minIsr, hasMinIsr := minInsyncReplicas(rc)
		for _, p := range parts {
			leader := p.Leader >= 0
			show := describeConfigs ||
				(f.underReplicated && len(p.Replicas) > len(p.ISR)) ||
				(f.unavailable && (!leader || !slices.Contains(live, p.Leader))) ||
				(f.underMinIsr && (!leader || (hasMinIsr && len(p.ISR) < minIsr))) ||
				(f.atMinIsr && hasMinIsr && len(p.ISR) == minIsr)
			if show {
				b.WriteString(formatPartitionLine(d.Topic, p))
			}
		}
	}
	return b.String()
}

// formatTopicLine is a topic's summary line; the factor is the first
// partition's replica count, configs are those not at their default.
func formatTopicLine(d kadm.TopicDetail, rc kadm.ResourceConfig) string {
	var b strings.Builder
	b.WriteString("Topic: " + d.Topic)
	if d.ID != (kadm.TopicID{}) {
		b.WriteString("\tTopicId: " + base64.RawURLEncoding.EncodeToString(d.ID[:]))
	}
	rf := 0
	if parts := d.Partitions.Sorted(); len(parts) > 0 {
		rf = len(parts[0].Replicas)
	}
	fmt.Fprintf(&b, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s\n", len(d.Partitions), rf, strings.Join(overrides(rc), ","))
	return b.String()
}

// formatPartitionLine is one partition's line.
func formatPartitionLine(topic string, p kadm.PartitionDetail) string {
	leader := "none"
	if p.Leader >= 0 {
		leader = strconv.Itoa(int(p.Leader))
	}
	return fmt.Sprintf("\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s\n",
		topic, p.Partition, leader, joinInt32(p.Replicas), joinInt32(p.ISR))
}

// overrides lists "name=value" for every config whose source is not the
// default (Kafka's !ConfigEntry.isDefault), in the broker's order.
func overrides(rc kadm.ResourceConfig) []string {
	var out []string
	for _, c := range rc.Configs {
		if c.Source == kmsg.ConfigSourceDefaultConfig {
			continue
		}
		v := "null"
		if c.Value != nil {
			v = *c.Value
		}
		out = append(out, c.Key+"="+v)
	}
	return out
}

func minInsyncReplicas(rc kadm.ResourceConfig) (int, bool) {
	for _, c := range rc.Configs {
		if c.Key == "min.insync.replicas" && c.Value != nil {
			n, err := strconv.Atoi(*c.Value)
			return n, err == nil
		}
	}
	return 0, false
}

func joinInt32(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// topicsOpts is a parsed, checked command line.
type topicsOpts struct {
	action        string // create, alter, list, describe or delete
	bootstrap     string
	commandConfig string
	topic         string
	topicSet      bool
	partitions    int32
	partitionsSet bool
	rf            int32
	rfSet         bool
	configs       [][2]string
	assignment    [][]int32 // --replica-assignment, one list per partition
	has           map[string]bool
}

func (o *topicsOpts) describeFilter() describeFilter {
	return describeFilter{
		underReplicated: o.has["under-replicated-partitions"],
		unavailable:     o.has["unavailable-partitions"],
		underMinIsr:     o.has["under-min-isr-partitions"],
		atMinIsr:        o.has["at-min-isr-partitions"],
		withOverrides:   o.has["topics-with-overrides"],
	}
}

// topicsFlags are kafka-topics.sh's options; true if they take a value.
var topicsFlags = map[string]bool{
	"bootstrap-server": true, "command-config": true, "topic": true, "config": true,
	"delete-config": true, "partitions": true, "replication-factor": true, "replica-assignment": true,
	"list": false, "create": false, "delete": false, "alter": false, "describe": false,
	"under-replicated-partitions": false, "unavailable-partitions": false,
	"under-min-isr-partitions": false, "at-min-isr-partitions": false,
	"topics-with-overrides": false, "if-exists": false, "if-not-exists": false,
	"disable-rack-aware": false, "force": false, "exclude-internal": false, "help": false,
}

var topicActions = []string{"create", "list", "alter", "describe", "delete"}

// parseTopicsArgs parses like joptsimple (--name value, --name=value,
// unambiguous prefixes; the last value wins, --config repeats) and then
// applies TopicCommandOptions.checkArgs and the value parsing Kafka does.
func parseTopicsArgs(args []string) (*topicsOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{"Create, delete, describe, or change a topic.", 1}
	}
	vals, err := scanOptions(args, topicsFlags)
	if err != nil {
		return nil, err
	}
	o := &topicsOpts{has: map[string]bool{}}
	for k := range vals {
		o.has[k] = true
	}
	if o.has["help"] {
		return nil, &usageError{"This tool helps to create, delete, describe, or change a topic.", 0}
	}
	if err := checkTopicsArgs(o.has); err != nil {
		return nil, err
	}
	return o, o.fill(vals)
}

// topicsInvalid lists, per option, the options it cannot be used with
// (Kafka's checkInvalidArgs calls, in bootstrap-server mode).
var topicsInvalid = []struct {
	used string
	with []string
}{
	{"config", []string{"list", "describe", "delete"}},
	{"delete-config", []string{"create", "list", "describe", "delete", "bootstrap-server"}},
	{"partitions", []string{"list", "describe", "delete"}},
	{"replication-factor", []string{"alter", "list", "describe", "delete"}},
	{"replica-assignment", []string{"list", "describe", "delete"}},
	{"under-replicated-partitions", reportConflicts("under-replicated-partitions")},
	{"under-min-isr-partitions", reportConflicts("under-min-isr-partitions")},
	{"at-min-isr-partitions", reportConflicts("at-min-isr-partitions")},
	{"unavailable-partitions", reportConflicts("unavailable-partitions")},
	{"topics-with-overrides", []string{"create", "list", "alter", "delete",
		"under-replicated-partitions", "under-min-isr-partitions", "at-min-isr-partitions", "unavailable-partitions"}},
	{"if-exists", []string{"create", "list"}},
	{"if-not-exists", []string{"list", "alter", "describe", "delete"}},
	{"exclude-internal", []string{"create", "alter", "delete"}},
}

func reportConflicts(self string) []string {
	out := []string{"create", "list", "alter", "delete"}
	for _, r := range []string{"under-replicated-partitions", "under-min-isr-partitions", "at-min-isr-partitions", "unavailable-partitions", "topics-with-overrides"} {
		if r != self {
			out = append(out, r)
		}
	}
	return out
}

func checkTopicsArgs(has map[string]bool) error {
	n := 0
	for _, a := range topicActions {
		if has[a] {
			n++
		}
	}
	if n != 1 {
		return &usageError{"Command must include exactly one action: --list, --describe, --create, --alter or --delete", 1}
	}
	if !has["bootstrap-server"] {
		return &usageError{"Missing required argument \"[bootstrap-server]\"", 1}
	}
	needTopic := (has["describe"] && has["if-exists"]) || (!has["list"] && !has["describe"])
	if needTopic && !has["topic"] {
		return &usageError{"Missing required argument \"[topic]\"", 1}
	}
	if has["alter"] {
		if has["config"] {
			return &usageError{"Option combination \"[bootstrap-server],[config]\" can't be used with option \"[alter]\" (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)", 1}
		}
		if !has["partitions"] {
			return &usageError{"Missing required argument \"[partitions]\"", 1}
		}
	}
	for _, c := range topicsInvalid {
		if !has[c.used] {
			continue
		}
		for _, w := range c.with {
			if has[w] {
				return &usageError{fmt.Sprintf("Option \"[%s]\" can't be used with option \"[%s]\"", c.used, w), 1}
			}
		}
	}
	if has["create"] && has["replica-assignment"] {
		for _, w := range []string{"partitions", "replication-factor"} {
			if has[w] {
				return &usageError{fmt.Sprintf("Option \"[replica-assignment]\" can't be used with option \"[%s]\"", w), 1}
			}
		}
	}
	return nil
}

// fill parses the option values (errors here are Kafka's runtime errors,
// not usage errors).
func (o *topicsOpts) fill(vals map[string][]string) error {
	for _, a := range topicActions {
		if o.has[a] {
			o.action = a
		}
	}
	last := func(k string) string { v := vals[k]; return v[len(v)-1] }
	o.bootstrap = last("bootstrap-server")
	if o.has["command-config"] {
		o.commandConfig = last("command-config")
	}
	if o.topicSet = o.has["topic"]; o.topicSet {
		o.topic = last("topic")
	}
	var err error
	if o.partitionsSet = o.has["partitions"]; o.partitionsSet {
		if o.partitions, err = parseInt32("partitions", last("partitions")); err != nil {
			return err
		}
	}
	if o.rfSet = o.has["replication-factor"]; o.rfSet {
		if o.rf, err = parseInt32("replication-factor", last("replication-factor")); err != nil {
			return err
		}
	}
	if o.has["replica-assignment"] && last("replica-assignment") != "" {
		if o.assignment, err = parseReplicaAssignment(last("replica-assignment")); err != nil {
			return err
		}
	}
	if o.configs, err = parseTopicConfigs(vals["config"]); err != nil {
		return err
	}
	if o.action == "create" {
		if o.rfSet && (o.rf > 32767 || o.rf < 1) {
			return errors.New("The replication factor must be between 1 and 32767 inclusive")
		}
		if o.partitionsSet && o.partitions < 1 {
			return errors.New("The partitions must be greater than 0")
		}
	}
	return nil
}

func parseInt32(opt, s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("Cannot parse argument '%s' of option %s", s, opt)
	}
	return int32(n), nil
}

// javaSplit splits like Java's String.split: without a match the input is
// the only element; otherwise trailing empty strings are dropped.
func javaSplit(s string, re *regexp.Regexp) []string {
	parts := re.Split(s, -1)
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

var (
	configSep = regexp.MustCompile(`\s*=\s*`)
	commaSep  = regexp.MustCompile(`,`)
	colonSep  = regexp.MustCompile(`:`)
)

// parseTopicConfigs reads --config k=v values (Kafka's
// parseTopicConfigsToBeAdded); a repeated key keeps its last value.
func parseTopicConfigs(raw []string) ([][2]string, error) {
	var out [][2]string
	for _, s := range raw {
		kv := javaSplit(s, configSep)
		if len(kv) != 2 {
			return nil, errors.New(`requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".`)
		}
		k, v := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		if i := slices.IndexFunc(out, func(e [2]string) bool { return e[0] == k }); i >= 0 {
			out[i][1] = v
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// parseReplicaAssignment reads "0:1:2,1:2:0" (Kafka's
// parseReplicaAssignment): partitions separated by commas, brokers by
// colons; no broker twice in a partition, the same count in every one.
func parseReplicaAssignment(s string) ([][]int32, error) {
	var out [][]int32
	for i, part := range javaSplit(s, commaSep) {
		var brokers []int32
		var dups []string
		for _, b := range javaSplit(part, colonSep) {
			b = strings.TrimSpace(b)
			n, err := strconv.ParseInt(b, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("For input string: \"%s\"", b)
			}
			if slices.Contains(brokers, int32(n)) && !slices.Contains(dups, b) {
				dups = append(dups, b)
			}
			brokers = append(brokers, int32(n))
		}
		if len(dups) > 0 {
			return nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dups, ","))
		}
		if len(out) > 0 && len(brokers) != len(out[0]) {
			return nil, fmt.Errorf("Partition %d has different replication factor: [%s]", i, strings.ReplaceAll(joinInt32(brokers), ",", ", "))
		}
		out = append(out, brokers)
	}
	return out, nil
}

const topicsUsage = `Option                                   Description
------                                   -----------
--alter                                  Alter the number of partitions and
                                           replica assignment.
--at-min-isr-partitions                  if set when describing topics, only
                                           show partitions whose isr count is
                                           equal to the configured minimum.
--bootstrap-server <String: server to    REQUIRED: The Kafka server to connect
  connect to>                              to.
--command-config <String: command        Accepted and ignored (samsa).
  config property file>
--config <String: name=value>            A topic configuration override for the
                                           topic being created.
--create                                 Create a new topic.
--delete                                 Delete a topic
--describe                               List details for the given topics.
--exclude-internal                       exclude internal topics when running
                                           list or describe command.
--help                                   Print usage information.
--if-exists                              if set when altering or deleting or
                                           describing topics, the action will
                                           only execute if the topic exists.
--if-not-exists                          if set when creating topics, the
                                           action will only execute if the
                                           topic does not already exist.
--list                                   List all available topics.
--partitions <Integer: # of partitions>  The number of partitions for the topic
                                           being created or altered. If not
                                           supplied for create, defaults to the
                                           cluster default.
--replica-assignment <String:            A list of manual partition-to-broker
  broker_id_for_part1_replica1 :           assignments for the topic being
  broker_id_for_part1_replica2 ,           created or altered.
  broker_id_for_part2_replica1 :
  broker_id_for_part2_replica2 , ...>
--replication-factor <Integer:           The replication factor for each
  replication factor>                      partition in the topic being
                                           created. If not supplied, defaults
                                           to the cluster default.
--topic <String: topic>                  The topic to create, alter, describe
                                           or delete. It also accepts a regular
                                           expression, except for --create
                                           option.
--topics-with-overrides                  if set when describing topics, only
                                           show topics that have overridden
                                           configs
--unavailable-partitions                 if set when describing topics, only
                                           show partitions whose leader is not
                                           available
--under-min-isr-partitions               if set when describing topics, only
                                           show partitions whose isr count is
                                           less than the configured minimum.
--under-replicated-partitions            if set when describing topics, only
                                           show under replicated partitions
`

package main

// samsa configs: kafka-configs.sh (Kafka 3.x, --bootstrap-server mode) over
// the Kafka protocol only, through franz-go. Entity types topics, brokers
// (DescribeConfigs, IncrementalAlterConfigs for topics, AlterConfigs for
// brokers, as Kafka's ConfigCommand), users and clients (client quotas:
// DescribeClientQuotas, AlterClientQuotas). Flags, checks, messages and
// output follow ConfigCommand: usage errors print the message and the usage
// to stderr and exit 1; argument and config errors print the message to
// stderr and exit 1; failures from the cluster print "Error while executing
// config command with args '<args>'" and the error to stderr and exit 1.
// Parsing and formatting are pure functions (configs_test.go).

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

const configsTimeout = 60 * time.Second

func runConfigs(args []string) error { return runTool(configsMain, args) }

// configsMain runs the command and returns its exit code.
func configsMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseConfigsArgs(args)
	if code, ok := printUsageError(err, configsUsage, stdout, stderr); ok {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	if o.commandConfig != "" {
		fmt.Fprintln(stderr, "WARNING: --command-config is not supported by samsa configs and is ignored.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), configsTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err == nil {
		defer cl.Close()
		err = executeConfigs(ctx, kadm.NewClient(cl), o, stdout)
	}
	var ae *argError
	switch {
	case errors.As(err, &ae):
		fmt.Fprintln(stderr, ae.msg)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "Error while executing config command with args '%s'\n%s\n", strings.Join(args, " "), errorText(err))
		return 1
	}
	return 0
}

// argError is what Kafka's tool reports with the message alone
// (IllegalArgumentException, InvalidConfigurationException).
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func executeConfigs(ctx context.Context, adm *kadm.Client, o *configsOpts, stdout io.Writer) error {
	switch {
	case o.describe && (o.types[0] == "users" || o.types[0] == "clients"):
		return describeQuotas(ctx, adm, o, stdout)
	case o.describe:
		return describeResources(ctx, adm, o, stdout)
	case o.types[0] == "users" || o.types[0] == "clients":
		err := alterQuotas(ctx, adm, o)
		if err == nil {
			fmt.Fprintln(stdout, completedLine(o.types[0], o.names[0]))
		}
		return err
	}
	err := alterResource(ctx, adm, o)
	if err == nil {
		fmt.Fprintln(stdout, completedLine(o.types[0], o.names[0]))
	}
	return err
}

// describeResources prints the configs of a topic or broker, or of every
// one (brokers: then the cluster default), as describeResourceConfig.
func describeResources(ctx context.Context, adm *kadm.Client, o *configsOpts, stdout io.Writer) error {
	typ := o.types[0]
	entities := o.names
	if len(entities) == 0 {
		var err error
		if entities, err = allEntities(ctx, adm, typ); err != nil {
			return err
		}
	} else if typ == "topics" && !o.all {
		topics, err := adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return err
		}
		if !topics.Has(entities[0]) {
			fmt.Fprintf(stdout, "The topic '%s' doesn't exist and doesn't have dynamic config.\n", entities[0])
			return nil
		}
	}
	for _, name := range entities {
		configs, err := resourceConfigs(ctx, adm, typ, name)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, formatResourceConfigs(typ, name, o.all, configs))
	}
	return nil
}

func allEntities(ctx context.Context, adm *kadm.Client, typ string) ([]string, error) {
	if typ == "topics" {
		topics, err := adm.ListTopicsWithInternal(ctx)
		return topics.Names(), err
	}
	m, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range m.Brokers {
		out = append(out, strconv.Itoa(int(b.NodeID)))
	}
	return append(out, ""), nil
}

// resourceConfigs describes one topic or broker ("" the cluster default).
func resourceConfigs(ctx context.Context, adm *kadm.Client, typ, name string) ([]kadm.Config, error) {
	var rcs kadm.ResourceConfigs
	var err error
	if typ == "topics" {
		rcs, err = adm.DescribeTopicConfigs(ctx, name)
	} else if name == "" {
		rcs, err = adm.DescribeBrokerConfigs(ctx)
	} else {
		id, perr := strconv.ParseInt(name, 10, 32)
		if perr != nil {
			return nil, &argError{fmt.Sprintf("The entity name for %s must be a valid integer broker id, found: %s", typ, name)}
		}
		rcs, err = adm.DescribeBrokerConfigs(ctx, int32(id))
	}
	if err != nil {
		return nil, err
	}
	if len(rcs) != 1 {
		return nil, fmt.Errorf("expected one resource in the answer, got %d", len(rcs))
	}
	if rcs[0].Err != nil {
		return nil, &kafkaError{err: rcs[0].Err, msg: &rcs[0].ErrMessage}
	}
	return rcs[0].Configs, nil
}

// alterResource changes a topic's configs incrementally (SET, DELETE) and a
// broker's by replacing its dynamic configs, as ConfigCommand does; deleting
// a config the entity does not have is an error.
func alterResource(ctx context.Context, adm *kadm.Client, o *configsOpts) error {
	typ, name := o.types[0], o.names[0]
	old, err := resourceConfigs(ctx, adm, typ, name)
	if err != nil {
		return err
	}
	dynamic := map[string]kadm.Config{}
	for _, c := range old {
		if c.Source == dynamicSource(typ, name) {
			dynamic[c.Key] = c
		}
	}
	var missing []string
	for _, k := range o.deletes {
		if _, ok := dynamic[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return &argError{"Invalid config(s): " + strings.Join(missing, ",")}
	}
	var resps kadm.AlterConfigsResponses
	if typ == "topics" {
		resps, err = adm.AlterTopicConfigs(ctx, topicOps(o), name)
	} else {
		state, serr := brokerState(dynamic, o)
		if serr != nil {
			return serr
		}
		resps, err = alterBrokerState(ctx, adm, state, name)
	}
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Err != nil {
			return &kafkaError{err: r.Err, msg: &r.ErrMessage}
		}
	}
	return nil
}

func alterBrokerState(ctx context.Context, adm *kadm.Client, state []kadm.AlterConfig, name string) (kadm.AlterConfigsResponses, error) {
	if name == "" {
		return adm.AlterBrokerConfigsState(ctx, state)
	}
	id, _ := strconv.ParseInt(name, 10, 32) // checked by resourceConfigs
	return adm.AlterBrokerConfigsState(ctx, state, int32(id))
}

// topicOps are the incremental operations of an alter: SET each added
// config, DELETE each deleted one.
func topicOps(o *configsOpts) []kadm.AlterConfig {
	var ops []kadm.AlterConfig
	for _, kv := range o.adds {
		v := kv[1]
		ops = append(ops, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv[0], Value: &v})
	}
	for _, k := range o.deletes {
		ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return ops
}

// brokerState is the broker entity's whole new dynamic config: the old one
// with the additions, without the deletions. A sensitive entry (its value
// hidden) that stays is an error, as Kafka's tool says.
func brokerState(dynamic map[string]kadm.Config, o *configsOpts) ([]kadm.AlterConfig, error) {
	next := map[string]*string{}
	for k, c := range dynamic {
		next[k] = c.Value
	}
	for _, kv := range o.adds {
		v := kv[1]
		next[kv[0]] = &v
	}
	for _, k := range o.deletes {
		delete(next, k)
	}
	var sensitive []string
	var out []kadm.AlterConfig
	for _, k := range sortedKeys(next) {
		if next[k] == nil {
			sensitive = append(sensitive, k)
		}
		out = append(out, kadm.AlterConfig{Name: k, Value: next[k]})
	}
	if len(sensitive) > 0 {
		return nil, &argError{"All sensitive broker config entries must be specified for --alter, missing entries: Set(" + strings.Join(sensitive, ", ") + ")"}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

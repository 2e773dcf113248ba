package main

// Command-line parsing of samsa leader-election, as joptsimple and
// LeaderElectionCommandOptions.validate do it: --name value, --name=value
// and unambiguous prefixes, the last value winning; then the required
// options, exactly one partition selection, and --partition with --topic
// only, with Kafka's messages.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

func parseElectionArgs(args []string) (*electionOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{electionAbout, 1}
	}
	vals, err := scanOptions(args, electionFlags)
	if err != nil {
		return nil, err
	}
	has := func(k string) bool { _, ok := vals[k]; return ok }
	last := func(k string) string { v := vals[k]; return v[len(v)-1] }
	if has("help") {
		return nil, &usageError{electionAbout, 0}
	}
	if has("version") {
		return nil, &usageError{"samsa " + version, 0}
	}
	o := &electionOpts{}
	if has("election-type") {
		switch strings.ToUpper(last("election-type")) {
		case "PREFERRED":
			o.how = kadm.ElectPreferredReplica
		case "UNCLEAN":
			o.how = kadm.ElectLiveReplica
		default:
			return nil, fmt.Errorf("Cannot parse argument '%s' of option election-type", last("election-type"))
		}
	}
	if has("partition") {
		if o.partition, err = parseInt32("partition", last("partition")); err != nil {
			return nil, err
		}
	}
	var missing []string
	for _, k := range []string{"bootstrap-server", "election-type"} {
		if !has(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, errors.New("Missing required option(s): " + strings.Join(missing, ", "))
	}
	selections := 0
	for _, k := range []string{"topic", "all-topic-partitions", "path-to-json-file"} {
		if has(k) {
			selections++
		}
	}
	if selections != 1 {
		return nil, errors.New("One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file")
	}
	switch {
	case has("topic") && !has("partition"):
		return nil, errors.New("Missing required option(s): partition")
	case !has("topic") && has("partition"):
		return nil, errors.New("Option partition is only allowed if topic is used")
	}
	o.bootstrap = last("bootstrap-server")
	o.all = has("all-topic-partitions")
	if has("topic") {
		o.topic = last("topic")
	}
	if has("path-to-json-file") {
		o.jsonFile = last("path-to-json-file")
	}
	if has("admin.config") {
		o.adminConfig = last("admin.config")
	}
	return o, nil
}

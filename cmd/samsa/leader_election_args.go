package main

// Command-line parsing of samsa leader-election, as joptsimple and
// LeaderElectionCommandOptions.validate do it: --name value, --name=value
// and unambiguous prefixes, the last value winning; then the required
// options, exactly one partition selection, and --partition with --topic
// only, with Kafka's messages.

import (
	"errors"
	"fmt"
	"slices"
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

// scanOptions splits args into option values, flags naming whether an
// option takes a value; an option without one maps to [""]. Arguments that
// are not options are ignored, as joptsimple leaves them to the tool.
func scanOptions(args []string, flags map[string]bool) (map[string][]string, error) {
	vals := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		full, err := resolveOption(name, flags)
		if err != nil {
			return nil, err
		}
		if !flags[full] {
			if hasValue {
				return nil, fmt.Errorf("Option %s does not take an argument", full)
			}
			vals[full] = append(vals[full], "")
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("Option %s requires an argument", full)
			}
			i++
			value = args[i]
		}
		vals[full] = append(vals[full], value)
	}
	return vals, nil
}

// resolveOption finds the option named, or uniquely abbreviated, by name.
func resolveOption(name string, flags map[string]bool) (string, error) {
	if _, ok := flags[name]; ok {
		return name, nil
	}
	var found []string
	for f := range flags {
		if name != "" && strings.HasPrefix(f, name) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%s is not a recognized option", name)
	}
	slices.Sort(found)
	return "", fmt.Errorf("Option %s is ambiguous; possibilities: %s", name, strings.Join(found, ", "))
}

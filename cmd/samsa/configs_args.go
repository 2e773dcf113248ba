package main

// Arguments and output of samsa configs (configs.go): pure functions.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const configsUsage = `Option                                 Description
------                                 -----------
--add-config <String>                  Key Value pairs of configs to add.
                                         Square brackets can be used to group
                                         values which contain commas: 'k1=v1,
                                         k2=[v1,v2,v2],k3=v3'.
--all                                  List all configs for the given topic
                                         or broker entity (includes static
                                         configuration when the entity type
                                         is brokers)
--alter                                Alter the configuration for the
                                         entity.
--bootstrap-server <String: server to  The Kafka servers to connect to.
  connect to>
--command-config <String: command      Property file containing configs to be
  config property file>                  passed to Admin Client (ignored by
                                         samsa configs).
--delete-config <String>               config keys to remove 'k1,k2'
--describe                             List configs for the given entity.
--entity-default                       Default entity name for
                                         clients/users/brokers (applies to
                                         corresponding entity type)
--entity-name <String>                 Name of entity (topic name/client
                                         id/user principal name/broker id)
--entity-type <String>                 Type of entity
                                         (topics/clients/users/brokers)
--help                                 Print usage information.
`

var configsFlags = map[string]bool{
	"add-config": true, "all": false, "alter": false, "bootstrap-server": true,
	"command-config": true, "delete-config": true, "describe": false,
	"entity-default": false, "entity-name": true, "entity-type": true, "help": false,
}

var configsEntityTypes = []string{"topics", "clients", "users", "brokers"}

type configsOpts struct {
	bootstrap, commandConfig string
	describe, all            bool
	types                    []string
	names                    []string    // in command-line order; "" for --entity-default
	adds                     [][2]string // key, value in command-line order
	deletes                  []string
}

func parseConfigsArgs(args []string) (*configsOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{"Add/Remove entity config for a topic, client, user or broker", 1}
	}
	vals, err := scanOptions(args, configsFlags)
	if err != nil {
		return nil, &usageError{err.Error(), 1}
	}
	if _, ok := vals["help"]; ok {
		return nil, &usageError{"This tool helps to manipulate and describe entity config for a topic, client, user or broker", 0}
	}
	_, alter := vals["alter"]
	_, describe := vals["describe"]
	if alter == describe {
		return nil, &usageError{"Command must include exactly one action: --describe, --alter", 1}
	}
	if describe && (vals["add-config"] != nil || vals["delete-config"] != nil) {
		return nil, &usageError{"Option \"[describe]\" can't be used with option \"[add-config, delete-config]\"", 1}
	}
	o := &configsOpts{describe: describe, types: vals["entity-type"], names: entityNames(args)}
	_, o.all = vals["all"]
	o.bootstrap, o.commandConfig = last(vals["bootstrap-server"]), last(vals["command-config"])
	if err := o.check(alter, vals); err != nil {
		return nil, err
	}
	if o.adds, err = parseAddConfig(last(vals["add-config"])); err != nil {
		return nil, err
	}
	for _, d := range vals["delete-config"] {
		for _, k := range strings.Split(d, ",") {
			o.deletes = append(o.deletes, strings.TrimSpace(k))
		}
	}
	return o, nil
}

func last(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// entityNames are the values of --entity-name and --entity-default, in
// order, "" for a default.
func entityNames(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		if !strings.HasPrefix(args[i], "--") {
			continue
		}
		switch full, _ := resolveOption(name, configsFlags); full {
		case "entity-default":
			out = append(out, "")
		case "entity-name":
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			out = append(out, value)
		default:
			if configsFlags[full] && !hasValue {
				i++
			}
		}
	}
	return out
}

// check is ConfigCommandOptions.checkArgs for --bootstrap-server mode.
func (o *configsOpts) check(alter bool, vals map[string][]string) error {
	for i, t := range o.types {
		if slices.Index(o.types, t) != i {
			return &argError{"Duplicate entity type(s) specified: " + t}
		}
		if !slices.Contains(configsEntityTypes, t) {
			return &argError{fmt.Sprintf("Invalid entity type %s, the entity type must be one of %s with a --bootstrap-server argument",
				t, strings.Join(configsEntityTypes, ", "))}
		}
	}
	switch {
	case len(o.types) == 0:
		return &argError{"At least one entity type must be specified"}
	case len(o.types) > 1 && !(slices.Contains(o.types, "users") && slices.Contains(o.types, "clients")):
		return &argError{"Only 'users' and 'clients' entity types may be specified together"}
	case o.bootstrap == "":
		return &argError{"One of the required --bootstrap-server or --bootstrap-controller arguments must be specified"}
	case len(o.names) > len(o.types):
		return &argError{"More entity names specified than entity types"}
	case o.types[0] == "topics" && slices.Contains(o.names, ""):
		return &argError{"--entity-default must not be specified with --entity-type topics"}
	}
	if !alter {
		return nil
	}
	if len(o.names) != len(o.types) {
		return &argError{"An entity name must be specified for every entity type"}
	}
	if vals["add-config"] == nil && vals["delete-config"] == nil {
		return &argError{"At least one of --add-config or --delete-config must be specified with --alter"}
	}
	return nil
}

// configKeyPattern is what ConfigCommand accepts as a config key.
var configKeyPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]*$`)

// parseAddConfig parses 'k1=v1,k2=[v1,v2],k3=v3' as parseConfigsToBeAdded:
// pairs split on commas outside square brackets, each key=value split on
// the '=' outside them, brackets then dropped from the value.
func parseAddConfig(s string) ([][2]string, error) {
	if s == "" {
		return nil, nil
	}
	var out [][2]string
	for _, pair := range splitOutsideBrackets(s, ',') {
		kv := splitOutsideBrackets(pair, '=')
		if len(kv) != 2 {
			return nil, &argError{"Invalid entity config: all configs to be added must be in the format \"key=val\"."}
		}
		k := strings.TrimSpace(kv[0])
		if !configKeyPattern.MatchString(k) {
			return nil, &argError{"Invalid character found for config key: " + k}
		}
		v := strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(kv[1]))
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// splitOutsideBrackets splits s on each sep not inside [...].
func splitOutsideBrackets(s string, sep rune) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case r == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// dynamicSource is the config source an entity's own dynamic configs have.
func dynamicSource(typ, name string) kmsg.ConfigSource {
	switch {
	case typ == "topics":
		return kmsg.ConfigSourceDynamicTopicConfig
	case name == "":
		return kmsg.ConfigSourceDynamicDefaultBrokerConfig
	}
	return kmsg.ConfigSourceDynamicBrokerConfig
}

// formatResourceConfigs is describeResourceConfig's output for one entity:
// the header, then each config (only the entity's dynamic ones unless all)
// sorted by name with its synonyms.
func formatResourceConfigs(typ, name string, all bool, configs []kadm.Config) string {
	var b strings.Builder
	switch {
	case name == "":
		fmt.Fprintf(&b, "Default configs for %s in the cluster are:\n", typ)
	case all:
		fmt.Fprintf(&b, "All configs for %s %s are:\n", strings.TrimSuffix(typ, "s"), name)
	default:
		fmt.Fprintf(&b, "Dynamic configs for %s %s are:\n", strings.TrimSuffix(typ, "s"), name)
	}
	sorted := slices.Clone(configs)
	slices.SortFunc(sorted, func(a, b kadm.Config) int { return strings.Compare(a.Key, b.Key) })
	for _, c := range sorted {
		if !all && c.Source != dynamicSource(typ, name) {
			continue
		}
		var syn []string
		for _, s := range c.Synonyms {
			syn = append(syn, fmt.Sprintf("%s:%s=%s", s.Source, s.Key, nullable(s.Value)))
		}
		fmt.Fprintf(&b, "  %s=%s sensitive=%t synonyms={%s}\n", c.Key, nullable(c.Value), c.Sensitive, strings.Join(syn, ", "))
	}
	return b.String()
}

func nullable(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// completedLine is what a successful --alter prints.
func completedLine(typ, name string) string {
	if name == "" {
		return fmt.Sprintf("Completed updating default config for %s in the cluster.", typ)
	}
	return fmt.Sprintf("Completed updating config for %s %s.", strings.TrimSuffix(typ, "s"), name)
}

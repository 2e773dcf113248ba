package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseConfigsArgs(t *testing.T) {
	o, err := parseConfigsArgs([]string{"--bootstrap-server", "h:1", "--alter", "--entity-type", "users", "--entity-default",
		"--entity-type", "clients", "--entity-name", "c1", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048", "--delete-config", "request_percentage"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.types, []string{"users", "clients"}) || !slices.Equal(o.names, []string{"", "c1"}) {
		t.Errorf("entities %v %v", o.types, o.names)
	}
	if len(o.adds) != 2 || o.adds[1] != [2]string{"consumer_byte_rate", "2048"} || !slices.Equal(o.deletes, []string{"request_percentage"}) {
		t.Errorf("adds %v deletes %v", o.adds, o.deletes)
	}
	for _, c := range []struct {
		args  []string
		usage bool
		msg   string
	}{
		{[]string{"--bootstrap-server", "h:1", "--entity-type", "topics"}, true, "Command must include exactly one action: --describe, --alter"},
		{[]string{"--bootstrap-server", "h:1", "--describe"}, false, "At least one entity type must be specified"},
		{[]string{"--bootstrap-server", "h:1", "--describe", "--entity-type", "groups"}, false, "Invalid entity type groups, the entity type must be one of topics, clients, users, brokers with a --bootstrap-server argument"},
		{[]string{"--bootstrap-server", "h:1", "--describe", "--entity-type", "topics", "--entity-type", "brokers"}, false, "Only 'users' and 'clients' entity types may be specified together"},
		{[]string{"--describe", "--entity-type", "topics"}, false, "One of the required --bootstrap-server or --bootstrap-controller arguments must be specified"},
		{[]string{"--bootstrap-server", "h:1", "--alter", "--entity-type", "topics", "--entity-name", "t"}, false, "At least one of --add-config or --delete-config must be specified with --alter"},
		{[]string{"--bootstrap-server", "h:1", "--alter", "--entity-type", "topics", "--add-config", "a=b"}, false, "An entity name must be specified for every entity type"},
		{[]string{"--bootstrap-server", "h:1", "--alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "a=b=c"}, false, `Invalid entity config: all configs to be added must be in the format "key=val".`},
	} {
		_, err := parseConfigsArgs(c.args)
		var ue *usageError
		var ae *argError
		switch {
		case c.usage && (!errors.As(err, &ue) || ue.msg != c.msg):
			t.Errorf("%v: %v; want usage error %q", c.args, err, c.msg)
		case !c.usage && (!errors.As(err, &ae) || ae.msg != c.msg):
			t.Errorf("%v: %v; want %q", c.args, err, c.msg)
		}
	}
}

func TestParseAddConfigBrackets(t *testing.T) {
	got, err := parseAddConfig("cleanup.policy=[compact,delete], retention.ms = 1000,k=")
	want := [][2]string{{"cleanup.policy", "compact,delete"}, {"retention.ms", "1000"}, {"k", ""}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v %v; want %v", got, err, want)
	}
}

func TestFormatResourceConfigs(t *testing.T) {
	s := func(v string) *string { return &v }
	configs := []kadm.Config{
		{Key: "segment.bytes", Value: s("1024"), Source: kmsg.ConfigSourceDynamicTopicConfig, Synonyms: []kadm.ConfigSynonym{
			{Key: "segment.bytes", Value: s("1024"), Source: kmsg.ConfigSourceDynamicTopicConfig},
			{Key: "log.segment.bytes", Value: s("1073741824"), Source: kmsg.ConfigSourceDefaultConfig}}},
		{Key: "cleanup.policy", Value: s("delete"), Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "retention.ms", Value: s("1000"), Source: kmsg.ConfigSourceDynamicTopicConfig, Synonyms: []kadm.ConfigSynonym{
			{Key: "retention.ms", Value: s("1000"), Source: kmsg.ConfigSourceDynamicTopicConfig}}},
	}
	want := "Dynamic configs for topic t are:\n" +
		"  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}\n" +
		"  segment.bytes=1024 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=1024, DEFAULT_CONFIG:log.segment.bytes=1073741824}\n"
	if got := formatResourceConfigs("topics", "t", false, configs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := formatResourceConfigs("topics", "t", true, configs); !strings.HasPrefix(got, "All configs for topic t are:\n  cleanup.policy=delete sensitive=false synonyms={}\n") {
		t.Errorf("--all:\n%s", got)
	}
	def := []kadm.Config{{Key: "log.retention.ms", Value: s("5"), Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig,
		Synonyms: []kadm.ConfigSynonym{{Key: "log.retention.ms", Value: s("5"), Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig}}}}
	if got := formatResourceConfigs("brokers", "", false, def); got != "Default configs for brokers in the cluster are:\n  log.retention.ms=5 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5}\n" {
		t.Errorf("default:\n%s", got)
	}
	if got := completedLine("brokers", ""); got != "Completed updating default config for brokers in the cluster." {
		t.Error(got)
	}
	if got := completedLine("topics", "t"); got != "Completed updating config for topic t." {
		t.Error(got)
	}
}

func TestFormatQuota(t *testing.T) {
	u := "alice"
	q := kadm.DescribedClientQuota{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id"}, {Type: "user", Name: &u}},
		Values: kadm.ClientQuotaValues{{Key: "producer_byte_rate", Value: 2e7}, {Key: "consumer_byte_rate", Value: 1024}},
	}
	want := "Quota configs for user-principal 'alice', the default client-id are consumer_byte_rate=1024.0, producer_byte_rate=2.0E7"
	if got := formatQuota(q); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for f, want := range map[float64]string{0.5: "0.5", 1e-4: "1.0E-4", 12345678.5: "1.23456785E7", 0: "0.0"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s; want %s", f, got, want)
		}
	}
}

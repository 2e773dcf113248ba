package config

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaNames reads a testdata list of Kafka's config names.
func kafkaNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// DescribeConfigs lists every Kafka broker and topic config name, each with
// a source (issue 20), and Load takes each without a warning.
func TestKafkaConfigNames(t *testing.T) {
	check := func(file string, entries []Entry) {
		got := map[string]Entry{}
		for _, e := range entries {
			got[e.Name] = e
		}
		for _, n := range kafkaNames(t, file) {
			if e, ok := got[n]; !ok || e.Source == 0 || e.Doc == "" {
				t.Errorf("%s: %s described %v, source %d, doc %q", file, n, ok, e.Source, e.Doc)
			}
		}
	}
	b := load(t, nil)
	check("kafka-broker-configs.txt", b.DescribeBroker())
	check("kafka-topic-configs.txt", b.DescribeTopic(nil))
	if n := len(kafkaNames(t, "kafka-topic-configs.txt")); n != len(topicKeys) {
		t.Errorf("%d Kafka topic configs, Samsa has %d", n, len(topicKeys))
	}
}

// Keys Samsa does not act on say so; Kafka's update modes are kept for them.
func TestAcceptedKeysDescribed(t *testing.T) {
	b, warnings, err := Load(map[string]string{
		"log.dirs": t.TempDir(), "ssl.keystore.password": "secret", "sasl.jaas.config": "x required;",
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
	})
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	entries := b.DescribeBroker()
	for _, n := range []string{"ssl.keystore.password", "sasl.jaas.config"} {
		e := find(t, entries, n)
		if e.Value != nil || !e.Sensitive || e.Type != int8(kmsg.ConfigTypePassword) || e.Source != static || e.Synonyms[0].Value != nil {
			t.Errorf("%s: value %v sensitive %v type %d source %d", n, e.Value, e.Sensitive, e.Type, e.Source)
		}
	}
	for _, c := range []struct {
		name     string
		readOnly bool
	}{
		{"authorizer.class.name", true}, {"metric.reporters", false}, {"ssl.cipher.suites", false}, {"process.roles", true},
	} {
		e := find(t, entries, c.name)
		if e.ReadOnly != c.readOnly || !strings.HasSuffix(e.Doc, "Samsa: accepted, no effect.") {
			t.Errorf("%s: readOnly %v doc %q", c.name, e.ReadOnly, e.Doc)
		}
	}
	if _, err := ValidateBrokerConfigs(map[string]string{"metric.reporters": "x"}, false); err != nil {
		t.Errorf("cluster-wide accepted key at <default>: %v", err)
	}
	if _, err := ValidateBrokerConfigs(map[string]string{"ssl.cipher.suites": "x"}, false); err == nil {
		t.Error("per-broker accepted key at <default> was accepted")
	}
}

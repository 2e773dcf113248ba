package e2e

import (
	"strings"
	"testing"
)

// TestClientQuotasCLI sets, describes and deletes client quotas the
// kafka-configs.sh way (`samsa configs --entity-type users|clients`, over
// AlterClientQuotas and DescribeClientQuotas) on a running broker.
func TestClientQuotasCLI(t *testing.T) {
	p := startServer(t, t.TempDir(), freePort(t))
	bs := []string{"--bootstrap-server", p.addr}
	run := func(want string, args ...string) {
		t.Helper()
		if out, code := samsaConfigs(t, append(bs, args...)...); code != 0 || out != want {
			t.Fatalf("samsa configs %s: exit %d\n%s\nwant\n%s", strings.Join(args, " "), code, out, want)
		}
	}
	run("Completed updating config for client app-1.\n",
		"--alter", "--entity-type", "clients", "--entity-name", "app-1", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
	run("Completed updating config for user alice.\n",
		"--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app-1",
		"--add-config", "request_percentage=12.5")
	run("Completed updating default config for users in the cluster.\n",
		"--alter", "--entity-type", "users", "--entity-default", "--add-config", "producer_byte_rate=4096")

	run("Quota configs for client-id 'app-1' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0\n",
		"--describe", "--entity-type", "clients", "--entity-name", "app-1")
	run("Quota configs for user-principal 'alice', client-id 'app-1' are request_percentage=12.5\n",
		"--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app-1")
	run("Quota configs for the default user-principal are producer_byte_rate=4096.0\n",
		"--describe", "--entity-type", "users", "--entity-default")

	run("Completed updating config for client app-1.\n",
		"--alter", "--entity-type", "clients", "--entity-name", "app-1", "--delete-config", "producer_byte_rate")
	run("Quota configs for client-id 'app-1' are consumer_byte_rate=2048.0\n",
		"--describe", "--entity-type", "clients", "--entity-name", "app-1")
	if out, code := samsaConfigs(t, append(bs, "--alter", "--entity-type", "clients", "--entity-name", "app-1",
		"--add-config", "producer_byte_rate=1.5")...); code == 0 || !strings.Contains(out, "must be a LONG value") {
		t.Fatalf("fractional producer_byte_rate: exit %d\n%s", code, out)
	}
}

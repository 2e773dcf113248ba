package chaos

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Net is a set of hosts, each a network namespace with one veth into a
// bridge that lives in a namespace of its own (the hub), plus a link from
// the caller's namespace into the bridge so that the campaign's clients
// reach every host. Nothing but that link touches the caller's namespace.
//
// Links between two hosts are cut with "prohibit" routes on both sides
// (iproute2 alone, no netfilter): new connections fail at once and
// established ones stall until their timeouts, as when a switch drops the
// traffic. Slow links use netem where the kernel has it, else a token
// bucket (tbf) that delays and drops what exceeds its rate.
type Net struct {
	prefix string // namespace and interface prefix, unique per run
	subnet string // "10.77.N."
	hub    string
	mu     sync.Mutex
	hosts  map[string]*Host
	client *Host
	cuts   map[[2]string]bool
	slow   map[string]bool
}

// Host is one namespace on the bridge.
type Host struct {
	Name string
	NS   string // "" for the caller's namespace (the client)
	IP   string
}

// NewNet creates the hub and the client link. id makes names unique
// (several runs may share the machine); it selects the subnet 10.77.id.0/24.
func NewNet(ctx context.Context, id int) (*Net, error) {
	n := &Net{
		prefix: fmt.Sprintf("sc%d", id),
		subnet: fmt.Sprintf("10.77.%d.", id%250),
		hosts:  map[string]*Host{},
		cuts:   map[[2]string]bool{},
		slow:   map[string]bool{},
	}
	n.hub = n.prefix + "-hub"
	n.client = &Host{Name: "client", IP: n.subnet + "1"}
	link := n.prefix + "-cl"
	steps := [][]string{
		{"netns", "add", n.hub},
		{"-n", n.hub, "link", "set", "lo", "up"},
		{"-n", n.hub, "link", "add", "br0", "type", "bridge"},
		{"-n", n.hub, "link", "set", "br0", "up"},
		{"link", "add", link, "type", "veth", "peer", "name", "p-client", "netns", n.hub},
		{"-n", n.hub, "link", "set", "p-client", "master", "br0", "up"},
		{"addr", "add", n.client.IP + "/24", "dev", link},
		{"link", "set", link, "up"},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// Client is the caller's own host on the bridge.
func (n *Net) Client() *Host { return n.client }

// AddHost creates a namespace on the bridge with the address 10.77.id.last.
func (n *Net) AddHost(ctx context.Context, name string, last int) (*Host, error) {
	h := &Host{Name: name, NS: n.prefix + "-" + name, IP: fmt.Sprintf("%s%d", n.subnet, last)}
	peer := "p-" + name
	steps := [][]string{
		{"netns", "add", h.NS},
		{"-n", h.NS, "link", "set", "lo", "up"},
		{"-n", n.hub, "link", "add", peer, "type", "veth", "peer", "name", "eth0", "netns", h.NS},
		{"-n", n.hub, "link", "set", peer, "master", "br0", "up"},
		{"-n", h.NS, "addr", "add", h.IP + "/24", "dev", "eth0"},
		{"-n", h.NS, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			return nil, err
		}
	}
	n.mu.Lock()
	n.hosts[name] = h
	n.mu.Unlock()
	return h, nil
}

// Cut drops all traffic between a and b, both ways.
func (n *Net) Cut(ctx context.Context, a, b *Host) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := pairKey(a, b)
	if n.cuts[k] {
		return nil
	}
	if err := n.route(ctx, "add", a, b); err != nil {
		return err
	}
	if err := n.route(ctx, "add", b, a); err != nil {
		return err
	}
	n.cuts[k] = true
	return nil
}

// route adds or deletes, in from's namespace, a prohibit route to to.
func (n *Net) route(ctx context.Context, verb string, from, to *Host) error {
	args := []string{"route", verb, "prohibit", to.IP + "/32"}
	if from.NS != "" {
		args = append([]string{"-n", from.NS}, args...)
	}
	return ip(ctx, args...)
}

// Heal restores every cut link and every slow one.
func (n *Net) Heal(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for k := range n.cuts {
		a, b := n.host(k[0]), n.host(k[1])
		errs = append(errs, n.route(ctx, "del", a, b), n.route(ctx, "del", b, a))
		delete(n.cuts, k)
	}
	for name := range n.slow {
		h := n.hosts[name]
		errs = append(errs, tc(ctx, "-n", h.NS, "qdisc", "del", "dev", "eth0", "root"),
			tc(ctx, "-n", n.hub, "qdisc", "del", "dev", "p-"+name, "root"))
		delete(n.slow, name)
	}
	return errors.Join(errs...)
}

// Slow makes h's link slow both ways: netem delay and loss if the kernel
// has it, else a 1 Mbit/s token bucket that delays and drops the excess.
// It returns which of the two it used.
func (n *Net) Slow(ctx context.Context, h *Host) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.slow[h.Name] {
		return "", nil
	}
	kind := "netem delay 50ms 20ms loss 2%"
	qdisc := strings.Fields(kind)
	if err := tc(ctx, append([]string{"-n", h.NS, "qdisc", "add", "dev", "eth0", "root"}, qdisc...)...); err != nil {
		kind = "tbf rate 1mbit burst 32kb latency 100ms"
		qdisc = strings.Fields(kind)
		if err := tc(ctx, append([]string{"-n", h.NS, "qdisc", "add", "dev", "eth0", "root"}, qdisc...)...); err != nil {
			return "", err
		}
	}
	n.slow[h.Name] = true
	err := tc(ctx, append([]string{"-n", n.hub, "qdisc", "add", "dev", "p-" + h.Name, "root"}, qdisc...)...)
	return kind, err
}

func (n *Net) host(name string) *Host {
	if name == n.client.Name {
		return n.client
	}
	return n.hosts[name]
}

func pairKey(a, b *Host) [2]string {
	if a.Name > b.Name {
		a, b = b, a
	}
	return [2]string{a.Name, b.Name}
}

// Close deletes every namespace and the client link (deleting a namespace
// deletes its end of each veth pair, and with it the other end).
func (n *Net) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for _, h := range n.hosts {
		errs = append(errs, ip(ctx, "netns", "del", h.NS))
	}
	errs = append(errs, ip(ctx, "netns", "del", n.hub))
	return errors.Join(errs...)
}

// Exec returns the command line that runs argv inside h's namespace.
func (h *Host) Exec(argv ...string) []string {
	if h.NS == "" {
		return argv
	}
	return append([]string{"ip", "netns", "exec", h.NS}, argv...)
}

func ip(ctx context.Context, args ...string) error { return run(ctx, "ip", args...) }
func tc(ctx context.Context, args ...string) error { return run(ctx, "tc", args...) }

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Available reports whether this process can create network namespaces
// (root with iproute2), and why not.
func Available(ctx context.Context) error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("ip(8) not found: %w", err)
	}
	probe := fmt.Sprintf("sc-probe-%d", time.Now().UnixNano()%1e6)
	if err := ip(ctx, "netns", "add", probe); err != nil {
		return err
	}
	return ip(ctx, "netns", "del", probe)
}

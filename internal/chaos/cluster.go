package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
)

// Layout is the cluster a campaign runs: a 3-member `samsa store` and
// Brokers brokers, each process in its own namespace.
type Layout struct {
	Bin              string // the samsa binary
	Dir              string // data and logs
	Brokers          int
	SessionTimeoutMs int
	// DiskMB, if positive, puts each broker's log.dirs on a tmpfs of
	// that size, so that the disk-full fault can fill it.
	DiskMB int
	// BrokerConfig is given to every broker as --override key=value, over
	// the layout's server.properties.
	BrokerConfig []string
}

// Cluster is the running layout.
type Cluster struct {
	Layout
	Net     *Net
	Stores  []*Proc
	Brokers []*Proc // broker id i+1 at index i
	Disks   []string
}

const storeMembers = 3

// StartCluster creates the network, starts the store members and the
// brokers, and returns once every process is started (not yet serving).
func StartCluster(ctx context.Context, l Layout, netID int) (*Cluster, error) {
	n, err := NewNet(ctx, netID)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Layout: l, Net: n}
	if err := c.start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	var hosts []*Host
	for i := 0; i < storeMembers; i++ {
		h, err := c.Net.AddHost(ctx, fmt.Sprintf("s%d", i+1), 11+i)
		if err != nil {
			return err
		}
		hosts = append(hosts, h)
	}
	var initial []string
	for _, h := range hosts {
		initial = append(initial, fmt.Sprintf("%s=http://%s:2380", h.Name, h.IP))
	}
	for _, h := range hosts {
		dir := filepath.Join(c.Dir, h.Name)
		p := NewProc(h.Name, h, dir+".log", c.Bin, "store", "--name", h.Name, "--data-dir", dir,
			"--listen-client-urls", "http://"+h.IP+":2379", "--listen-peer-urls", "http://"+h.IP+":2380",
			"--initial-cluster", strings.Join(initial, ","), "--auto-compaction-retention", "24h")
		c.Stores = append(c.Stores, p)
	}
	for i := 0; i < c.Layout.Brokers; i++ {
		p, err := c.addBroker(ctx, i+1, hosts)
		if err != nil {
			return err
		}
		c.Brokers = append(c.Brokers, p)
	}
	for _, p := range append(append([]*Proc{}, c.Stores...), c.Brokers...) {
		if err := p.Start(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) addBroker(ctx context.Context, id int, stores []*Host) (*Proc, error) {
	h, err := c.Net.AddHost(ctx, fmt.Sprintf("b%d", id), 20+id)
	if err != nil {
		return nil, err
	}
	logDir := filepath.Join(c.Dir, h.Name, "data")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	if c.DiskMB > 0 {
		if err := run(ctx, "mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", c.DiskMB), "tmpfs", logDir); err != nil {
			return nil, err
		}
		c.Disks = append(c.Disks, logDir)
	}
	var connect []string
	for _, s := range stores {
		connect = append(connect, s.IP+":2379")
	}
	props := []string{
		fmt.Sprintf("broker.id=%d", id),
		"listeners=PLAINTEXT://" + h.IP + ":9092",
		"log.dirs=" + logDir,
		"metadata.store.connect=" + strings.Join(connect, ",") + chroot,
		fmt.Sprintf("metadata.store.session.timeout.ms=%d", c.SessionTimeoutMs),
		"default.replication.factor=3",
		"min.insync.replicas=2",
		"offsets.topic.replication.factor=3",
		"offsets.topic.num.partitions=3",
		"transaction.state.log.replication.factor=3",
		"transaction.state.log.min.isr=2",
		"transaction.state.log.num.partitions=3",
		"replica.lag.time.max.ms=10000",
		// Deleted topics' directories go within a second, so the check
		// that they are gone need not wait a minute.
		"log.segment.delete.delay.ms=1000",
	}
	cfg := filepath.Join(c.Dir, h.Name, "server.properties")
	if err := os.WriteFile(cfg, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	argv := []string{c.Bin, "server", "--config", cfg}
	for _, o := range c.BrokerConfig {
		argv = append(argv, "--override", o)
	}
	return NewProc(h.Name, h, filepath.Join(c.Dir, h.Name+".log"), argv...), nil
}

// chroot is the cluster's key prefix in the store.
const chroot = "/samsa"

// StoreEndpoints lists the store members' client addresses.
func (c *Cluster) StoreEndpoints() []string {
	var out []string
	for _, s := range c.Stores {
		out = append(out, s.Host.IP+":2379")
	}
	return out
}

// ConnectStore connects to the store members, rooted at the cluster's
// chroot, from the caller's namespace (never cut by a fault).
func (c *Cluster) ConnectStore() (metastore.Store, error) {
	return etcdstore.Connect(c.StoreEndpoints(), chroot, 5*time.Second)
}

// Bootstrap lists the brokers' client addresses.
func (c *Cluster) Bootstrap() []string {
	var out []string
	for _, b := range c.Brokers {
		out = append(out, b.Host.IP+":9092")
	}
	return out
}

// Broker returns the broker with the given id.
func (c *Cluster) Broker(id int32) *Proc {
	if id < 1 || int(id) > len(c.Brokers) {
		return nil
	}
	return c.Brokers[id-1]
}

// RestartDead starts every process that is not running and resumes every
// stopped one.
func (c *Cluster) RestartDead() error {
	for _, p := range c.all() {
		if p.Running() {
			p.Cont()
			continue
		}
		if err := p.Start(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) all() []*Proc {
	return append(append([]*Proc{}, c.Stores...), c.Brokers...)
}

// Close stops the brokers (controlled shutdown), then the store, then
// removes the network and the tmpfs disks.
func (c *Cluster) Close() error {
	for _, p := range c.Brokers {
		p.Terminate(20 * time.Second)
	}
	for _, p := range c.Stores {
		p.Terminate(10 * time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, d := range c.Disks {
		run(ctx, "umount", "-l", d)
	}
	return c.Net.Close()
}

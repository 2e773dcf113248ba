package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
)

// runStore is `samsa store`: one member of the coordination store, an
// embedded etcd server, like zookeeper-server-start.sh. The flags are
// etcd's; the defaults give a working single node on 127.0.0.1:2379.
//
// A three-member cluster on one machine, for example:
//
//	samsa store --name s1 --data-dir s1 --listen-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
//	  --initial-cluster s1=http://127.0.0.1:2380,s2=http://127.0.0.1:2382,s3=http://127.0.0.1:2384
//
// and likewise s2 (2381/2382) and s3 (2383/2384). Brokers then use
// metadata.store.connect=127.0.0.1:2379,127.0.0.1:2381,127.0.0.1:2383[/chroot].
func runStore(args []string) error {
	fs := flag.NewFlagSet("store", flag.ContinueOnError)
	var c embedetcd.Config
	fs.StringVar(&c.Name, "name", embedetcd.DefaultName, "member name, unique in the cluster")
	fs.StringVar(&c.DataDir, "data-dir", "samsa-store", "folder for the member's data")
	fs.StringVar(&c.ClientURL, "listen-client-urls", embedetcd.DefaultClientURL, "URL to serve clients on")
	fs.StringVar(&c.PeerURL, "listen-peer-urls", embedetcd.DefaultPeerURL, "URL to serve other members on")
	fs.StringVar(&c.AdvertiseClientURL, "advertise-client-urls", "", "client URL to advertise (default: the listen URL)")
	fs.StringVar(&c.AdvertisePeerURL, "initial-advertise-peer-urls", "", "peer URL to advertise (default: the listen URL)")
	fs.StringVar(&c.InitialCluster, "initial-cluster", "", "name=peerURL,... of every member (default: this member alone)")
	fs.StringVar(&c.InitialClusterState, "initial-cluster-state", "new", `"new" to form a cluster, "existing" to join one`)
	fs.DurationVar(&c.AutoCompactionRetention, "auto-compaction-retention", 0, "history kept by periodic auto-compaction (default 5m)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("store: unexpected arguments %q", fs.Args())
	}
	logger := newLogger()
	c.Logger = logger
	srv, err := embedetcd.Start(c)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer srv.Close()
	logger.Info("store: serving", "name", c.Name, "clients", srv.Endpoints(), "data_dir", c.DataDir)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		logger.Info("store: shutting down", "signal", s.String())
		return nil
	case err := <-srv.Err():
		return fmt.Errorf("store: %w", err)
	}
}

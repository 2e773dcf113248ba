package embedetcd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/loopback"
)

// TestThreeMembers forms a cluster from three members started with the
// same initial cluster, writes through one and reads through another.
func TestThreeMembers(t *testing.T) {
	ports, err := loopback.FreePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	var initial []string
	cfgs := make([]Config, 3)
	for i := range cfgs {
		cfgs[i] = Config{
			Name:      fmt.Sprintf("m%d", i),
			DataDir:   t.TempDir(),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
		}
		initial = append(initial, cfgs[i].Name+"="+cfgs[i].PeerURL)
	}
	type result struct {
		s   *Server
		err error
	}
	results := make(chan result, 3)
	for i := range cfgs {
		cfgs[i].InitialCluster = strings.Join(initial, ",")
		go func(c Config) {
			s, err := Start(c)
			results <- result{s, err}
		}(cfgs[i])
	}
	var servers []*Server
	for range cfgs {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		servers = append(servers, r.s)
	}
	t.Cleanup(func() { // runs after the clients' cleanups
		for _, s := range servers {
			s.Close()
		}
	})
	if t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := newClient(t, servers[0].Endpoints())
	b := newClient(t, servers[2].Endpoints())
	if _, err := a.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := b.Get(ctx, "/k") // linearizable: sees the write
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("read through another member: %+v %v", resp, err)
	}
	members, err := a.MemberList(ctx)
	if err != nil || len(members.Members) != 3 {
		t.Fatalf("members: %+v %v", members, err)
	}
}

func newClient(t *testing.T, endpoints []string) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

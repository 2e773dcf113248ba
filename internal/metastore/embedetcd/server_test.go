package embedetcd_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
)

func TestStartServeRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := embedetcd.StartLocal(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s.Endpoints(), "/k", "v")
	s.Close()
	// The data survives a restart from the same directory.
	s, err = embedetcd.StartLocal(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cli := client(t, s.Endpoints())
	resp, err := cli.Get(context.Background(), "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("after restart: %+v %v", resp, err)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []embedetcd.Config{
		{},
		{DataDir: t.TempDir(), InitialClusterState: "sometimes"},
		{DataDir: t.TempDir(), ClientURL: "http://[::1"},
	}
	for _, c := range tests {
		if s, err := embedetcd.Start(c); err == nil {
			s.Close()
			t.Fatalf("config %+v accepted", c)
		}
	}
}

func client(t *testing.T, endpoints []string) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func put(t *testing.T, endpoints []string, k, v string) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(context.Background(), k, v); err != nil {
		t.Fatal(err)
	}
}

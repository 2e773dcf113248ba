// Package zktest runs Apache ZooKeeper servers for tests (zkserver's
// processes), standalone or as an ensemble, each with a temporary data
// directory and free ports. Tests skip when ZooKeeper is not installed, or
// fail if SAMSA_REQUIRE_ZOOKEEPER is set (scripts/test sets it after
// installing the package).
//
// Servers run with tickTime 500 ms, so sessions may last from 1 s to 60 s.
// Each server's process is killed by the test's cleanup.
package zktest

import (
	"os"
	"strings"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zkserver"
)

// Server is one ZooKeeper server process.
type Server = zkserver.Server

// Require skips t when ZooKeeper is not installed (fails it when
// SAMSA_REQUIRE_ZOOKEEPER is set).
func Require(t testing.TB) {
	t.Helper()
	err := zkserver.Installed()
	if err == nil {
		return
	}
	if os.Getenv("SAMSA_REQUIRE_ZOOKEEPER") != "" {
		t.Fatalf("ZooKeeper required but not installed: %v", err)
	}
	t.Skip("ZooKeeper not installed (apt-get install zookeeper)")
}

// Start runs a standalone server.
func Start(t testing.TB) *Server { return StartEnsemble(t, 1)[0] }

// StartEnsemble runs n servers forming one ensemble (n = 1: standalone)
// and waits until every one serves.
func StartEnsemble(t testing.TB, n int) []*Server {
	t.Helper()
	Require(t)
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	srvs, err := zkserver.StartEnsemble(dirs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srvs {
		t.Cleanup(s.Kill)
	}
	return srvs
}

// Connect is the servers' connect string, chroot appended.
func Connect(srvs []*Server, chroot string) string {
	addrs := make([]string, len(srvs))
	for i, s := range srvs {
		addrs[i] = s.Addr
	}
	return strings.Join(addrs, ",") + chroot
}

// FourLetter sends a four-letter word (ruok, srvr, mntr, ...) and returns
// the answer.
func FourLetter(addr, word string) (string, error) { return zkserver.FourLetter(addr, word) }

// Package zktest runs Apache ZooKeeper servers for tests: Debian's
// zookeeper package (a JVM) started as processes, standalone or as an
// ensemble, each with a temporary data directory and free ports. Tests
// skip when ZooKeeper is not installed, or fail if SAMSA_REQUIRE_ZOOKEEPER
// is set (scripts/test sets it after installing the package).
//
// Servers run with tickTime 500 ms, so sessions may last from 1 s to 60 s.
// Each server's process is killed by the test's cleanup.
package zktest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Jar is the server's jar as Debian installs it; its manifest names the
// other jars it needs.
const Jar = "/usr/share/java/zookeeper.jar"

// logJar sends the server's log lines to its server.log (Debian's
// libslf4j-java, which zookeeper depends on).
const logJar = "/usr/share/java/slf4j-simple.jar"

// Server is one ZooKeeper server process.
type Server struct {
	Addr string // client address, host:port
	dir  string
	cfg  string
	cmd  *exec.Cmd
	exit chan struct{}
}

// Require skips t when ZooKeeper is not installed (fails it when
// SAMSA_REQUIRE_ZOOKEEPER is set).
func Require(t testing.TB) {
	t.Helper()
	_, jerr := exec.LookPath("java")
	_, zerr := os.Stat(Jar)
	if jerr == nil && zerr == nil {
		return
	}
	if os.Getenv("SAMSA_REQUIRE_ZOOKEEPER") != "" {
		t.Fatalf("ZooKeeper required but not installed (apt-get install zookeeper): java: %v, jar: %v", jerr, zerr)
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
	ports := freePorts(t, 3*n)
	var peers strings.Builder
	if n > 1 {
		for i := range n {
			fmt.Fprintf(&peers, "server.%d=127.0.0.1:%d:%d\n", i+1, ports[3*i+1], ports[3*i+2])
		}
	}
	srvs := make([]*Server, n)
	for i := range n {
		dir := t.TempDir()
		if n > 1 {
			if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg := filepath.Join(dir, "zoo.cfg")
		text := fmt.Sprintf("tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
			"minSessionTimeout=1000\nmaxSessionTimeout=60000\nadmin.enableServer=false\n4lw.commands.whitelist=*\n"+
			"maxClientCnxns=0\n%s", dir, ports[3*i], peers.String())
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		srvs[i] = &Server{Addr: fmt.Sprintf("127.0.0.1:%d", ports[3*i]), dir: dir, cfg: cfg}
		srvs[i].start(t)
		t.Cleanup(srvs[i].Kill)
	}
	for _, s := range srvs {
		s.waitServing(t)
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

func (s *Server) start(t testing.TB) {
	t.Helper()
	out, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cp := Jar
	if _, err := os.Stat(logJar); err == nil {
		cp += ":" + logJar
	}
	s.cmd = exec.Command("java", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.jmx.log4j.disable=true", "-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", cp,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", s.cfg)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("zktest: start java: %v", err)
	}
	s.exit = make(chan struct{})
	go func(cmd *exec.Cmd, exit chan struct{}) {
		err := cmd.Wait()
		os.WriteFile(filepath.Join(s.dir, "exit"), []byte(fmt.Sprint(err)), 0o644)
		close(exit)
	}(s.cmd, s.exit)
}

// Log is the end of the server's log, for a failure message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if e, err := os.ReadFile(filepath.Join(s.dir, "exit")); err == nil {
		b = append(b, "\nexited: "+string(e)...)
	}
	return string(b[max(0, len(b)-4000):])
}

// Kill ends the server's process abruptly (SIGKILL) and waits for it.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exit
	s.cmd = nil
}

// Restart starts a killed server again on its data directory.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	s.start(t)
	s.waitServing(t)
}

// waitServing polls the srvr four-letter word until the server serves
// requests (standalone, or in a quorum).
func (s *Server) waitServing(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if out, err := FourLetter(s.Addr, "srvr"); err == nil && strings.Contains(out, "Mode:") {
			return
		}
		select {
		case <-s.exit:
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			t.Fatalf("zktest: server %s exited:\n%s", s.Addr, log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("zktest: server %s not serving after 90 s", s.Addr)
		}
	}
}

// FourLetter sends a four-letter word (ruok, srvr, mntr, ...) and returns
// the answer.
func FourLetter(addr, word string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(word)); err != nil {
		return "", err
	}
	var b strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	ls := make([]net.Listener, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls[i], ports[i] = l, l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

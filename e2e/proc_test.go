package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/chaos"
)

var samsaBin string

// raceBuild: the samsa binary is built with -race (race_test.go).
var raceBuild bool

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "samsa-e2e-bin")
	if err != nil {
		panic(err)
	}
	samsaBin = filepath.Join(dir, "samsa")
	if err := chaos.BuildSamsa(samsaBin, raceBuild); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// handedOut are the ports freePort has returned.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort reserves a loopback port for a broker.
//
// The port is below Linux's ephemeral range (32768-60999 by default): a
// port the kernel hands out for a listener there may meanwhile become the
// local port of some process's outgoing connection, and the server then
// fails to bind it (a CI run lost a broker so, while the readiness dial
// reached the connection's owner).
//
// No port is handed out twice in one test run. The check binds
// 127.0.0.1, so a port already given to a listener on another address
// (the EXTERNAL listeners on 127.0.0.2) passes it, and handed out again to
// a 127.0.0.1 listener, a broker's connection to that one reads as a
// connection to EXTERNAL in the listener tests. That is the one way found
// for a CI run's "broker 0 has a connection to broker 0's EXTERNAL
// listener".
func freePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("no free port below the ephemeral range")
	return 0
}

// proc is one `samsa server` process.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	addr   string
	stderr *logBuffer
	done   chan struct{}
}

// logBuffer collects a process's log while tests read it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer writes a server.properties and runs `samsa server` on it.
func startServer(t testing.TB, dataDir string, port int, extra ...string) *proc {
	t.Helper()
	props := []string{
		"broker.id=0",
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d", port),
		"log.dirs=" + dataDir,
	}
	props = append(props, extra...)
	cfg := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(cfg, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, addr: fmt.Sprintf("127.0.0.1:%d", port), stderr: &logBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(samsaBin, "server", "--config", cfg)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(); p.checkRaces() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", p.addr); err == nil {
			c.Close()
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("samsa exited: %s", p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("samsa did not listen on %s: %s", p.addr, p.stderr.String())
		}
	}
}

func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// checkRaces fails the test if the process (race-built) reported a data
// race.
func (p *proc) checkRaces() {
	if log := p.stderr.String(); strings.Contains(log, "WARNING: DATA RACE") {
		p.t.Errorf("samsa on %s reported a data race:\n%s", p.addr, log)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Fatalf("samsa did not stop on SIGTERM")
	}
}

// samsaTool runs `samsa <sub> args...` (bounded by timeout) and returns its
// stdout, stderr and exit code.
func samsaTool(t *testing.T, timeout time.Duration, sub string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, samsaBin, append([]string{sub}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), stderr.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	"github.com/samsa-kafka/samsa/internal/loopback"
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

// freePort reserves a loopback port for a broker, below Linux's ephemeral
// range and never handed out twice in one test run (internal/loopback).
func freePort(t testing.TB) int {
	t.Helper()
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
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
	return startSamsa(t, fmt.Sprintf("127.0.0.1:%d", port), "server", "--config", cfg)
}

// startSamsa runs `samsa args...` (killed at cleanup) and waits until addr
// takes connections.
func startSamsa(t testing.TB, addr string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, addr: addr, stderr: &logBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(samsaBin, args...)
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

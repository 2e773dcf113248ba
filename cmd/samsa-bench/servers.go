package main

// The servers of the default benchmark, each a process of its own: Samsa is
// this binary re-executed with -broker (cluster.go) on its embedded store,
// as `samsa server` runs by default; kfake is cmd/samsa-kfake. Neither
// shares the client's CPU time accounting or garbage collector.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/loopback"
)

// serverProc is one server process and where it listens.
type serverProc struct {
	cmd    *exec.Cmd
	addr   string
	stdin  io.Closer // kfake's: closing it stops the process
	dir    string    // removed on stop
	stderr *tailBuffer
}

// tailBuffer keeps the last 8 KiB written to it: a server's log, shown
// only when it fails to start.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 8<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// failed stops s and returns err with the end of its log.
func (s *serverProc) failed(err error) error {
	s.stop()
	return fmt.Errorf("%w; its log ends:\n%s", err, s.stderr)
}

func (s *serverProc) pid() int { return s.cmd.Process.Pid }

func (s *serverProc) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	if s.stdin != nil {
		s.stdin.Close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// startSamsa starts a one-broker Samsa process; cpuprofile, when not
// empty, is where it writes a CPU profile; extra are more -broker flags.
func startSamsa(cpuprofile string, extra ...string) (*serverProc, error) {
	dir, err := os.MkdirTemp("", "samsa-bench")
	if err != nil {
		return nil, err
	}
	port, err := loopback.FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"-broker", "-id", "0", "-dir", filepath.Join(dir, "log"), "-port", strconv.Itoa(port)}
	if cpuprofile != "" {
		args = append(args, "-cpuprofile", cpuprofile)
	}
	args = append(args, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // this process dies: so does the broker
	s := &serverProc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir, stderr: &tailBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := waitReady(s.addr); err != nil {
		return nil, s.failed(fmt.Errorf("samsa: %w", err))
	}
	return s, nil
}

// startKfake starts cmd/samsa-kfake from bin, with extra arguments, and
// reads the address it prints.
func startKfake(bin string, extra ...string) (*serverProc, error) {
	cmd := exec.Command(bin, append([]string{"-stdin", "-max-lifetime", "1h"}, extra...)...)
	s := &serverProc{cmd: cmd, stderr: &tailBuffer{}}
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.stdin = stdin
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return nil, s.failed(fmt.Errorf("kfake: reading its address: %w", err))
	}
	s.addr = strings.TrimSpace(line)
	if err := waitReady(s.addr); err != nil {
		return nil, s.failed(fmt.Errorf("kfake: %w", err))
	}
	return s, nil
}

// kfakeBinary is -kfake-bin, else samsa-kfake beside this executable, else
// one built now into a temp dir with the go command (as under `go run`),
// which cleanup removes.
func kfakeBinary(flagged string) (bin string, cleanup func(), err error) {
	if flagged != "" {
		return flagged, func() {}, nil
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "samsa-kfake"); fileExists(p) {
			return p, func() {}, nil
		}
	}
	dir, err := os.MkdirTemp("", "samsa-bench-bin")
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "samsa-kfake")
	fmt.Fprintln(os.Stderr, "building samsa-kfake (go build ./cmd/samsa-kfake) ...")
	cmd := exec.Command("go", "build", "-o", out, "github.com/samsa-kafka/samsa/cmd/samsa-kfake")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building samsa-kfake (or pass -kfake-bin): %w", err)
	}
	return out, func() { os.RemoveAll(dir) }, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// waitReady polls addr until it answers Metadata with a controller.
func waitReady(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err == nil {
			m, merr := kadm.NewClient(cl).BrokerMetadata(ctx)
			cl.Close()
			if merr == nil && len(m.Brokers) > 0 && m.Controller >= 0 {
				return nil
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("not ready at %s after 60s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

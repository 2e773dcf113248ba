package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is one process of the cluster (a store member or a broker) that
// the campaign kills, stops and restarts. Its output goes to one log file
// across restarts; each start writes a marker line.
type Proc struct {
	Name string
	Host *Host
	argv []string
	log  string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool // SIGSTOPped
	starts  int
	// expect is set when the campaign kills or terminates the process;
	// any other exit is counted in exits.
	expect bool
	exits  []string
}

// NewProc describes a process; Start runs it.
func NewProc(name string, h *Host, logPath string, argv ...string) *Proc {
	return &Proc{Name: name, Host: h, argv: argv, log: logPath}
}

// Start runs the process in its host's namespace if it is not running.
// The process dies with the campaign (PR_SET_PDEATHSIG), so a crashed or
// killed campaign leaves nothing behind.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running() {
		return nil
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.starts++
	fmt.Fprintf(f, "### chaos: start %d of %s at %s\n", p.starts, p.Name, time.Now().UTC().Format(time.RFC3339Nano))
	argv := p.Host.Exec(p.argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		if !p.expect {
			p.exits = append(p.exits, fmt.Sprintf("%s exited by itself (%v) at %s", p.Name, err, time.Now().UTC().Format(time.TimeOnly)))
		}
		p.mu.Unlock()
		close(done)
	}()
	p.cmd, p.done, p.stopped, p.expect = cmd, done, false, false
	return nil
}

func (p *Proc) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Running reports whether the process is alive (possibly stopped).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running()
}

// Pid is the running process's pid, 0 if none.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exits lists the exits the campaign did not cause.
func (p *Proc) Exits() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.exits...)
}

// Kill sends SIGKILL and waits for the process to go.
func (p *Proc) Kill() {
	p.expectExit()
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
}

// Stop sends SIGSTOP; Cont resumes it.
func (p *Proc) Stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.signal(syscall.SIGSTOP)
}

// Cont resumes a stopped process.
func (p *Proc) Cont() {
	p.mu.Lock()
	p.stopped = false
	p.mu.Unlock()
	p.signal(syscall.SIGCONT)
}

// Terminate asks the process to stop (SIGTERM, a broker's controlled
// shutdown) and kills it if it has not gone after grace.
func (p *Proc) Terminate(grace time.Duration) {
	p.expectExit()
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGTERM)
	if !p.wait(grace) {
		p.Kill()
	}
}

func (p *Proc) expectExit() {
	p.mu.Lock()
	p.expect = true
	p.mu.Unlock()
}

func (p *Proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running() {
		p.cmd.Process.Signal(sig)
	}
}

func (p *Proc) wait(d time.Duration) bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

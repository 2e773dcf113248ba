package zkserver

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-kafka/samsa/internal/loopback"
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

// Installed reports why ZooKeeper cannot run here (java or the jar
// missing), or nil.
func Installed() error {
	_, jerr := exec.LookPath("java")
	_, zerr := os.Stat(Jar)
	if jerr != nil || zerr != nil {
		return fmt.Errorf("zkserver: ZooKeeper not installed (apt-get install zookeeper): java: %v, jar: %v", jerr, zerr)
	}
	return nil
}

// Start runs a standalone server with its data in dir and waits until it
// serves.
func Start(dir string) (*Server, error) {
	srvs, err := StartEnsemble([]string{dir})
	if err != nil {
		return nil, err
	}
	return srvs[0], nil
}

// StartEnsemble runs one server per data directory of dirs, forming one
// ensemble (one directory: standalone), and waits until every one serves.
// On error the servers it started are killed.
func StartEnsemble(dirs []string) (srvs []*Server, err error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	n := len(dirs)
	ports, err := loopback.FreePorts(3 * n)
	if err != nil {
		return nil, err
	}
	var peers strings.Builder
	if n > 1 {
		for i := range n {
			fmt.Fprintf(&peers, "server.%d=127.0.0.1:%d:%d\n", i+1, ports[3*i+1], ports[3*i+2])
		}
	}
	defer func() {
		if err != nil {
			for _, s := range srvs {
				s.Kill()
			}
			srvs = nil
		}
	}()
	for i, dir := range dirs {
		if n > 1 {
			if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644); err != nil {
				return srvs, err
			}
		}
		cfg := filepath.Join(dir, "zoo.cfg")
		text := fmt.Sprintf("tickTime=500\ninitLimit=20\nsyncLimit=10\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
			"minSessionTimeout=1000\nmaxSessionTimeout=60000\nadmin.enableServer=false\n4lw.commands.whitelist=*\n"+
			"maxClientCnxns=0\n%s", dir, ports[3*i], peers.String())
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			return srvs, err
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", ports[3*i]), dir: dir, cfg: cfg}
		if err := s.start(); err != nil {
			return srvs, err
		}
		srvs = append(srvs, s)
	}
	for _, s := range srvs {
		if err := s.waitServing(); err != nil {
			return srvs, err
		}
	}
	return srvs, nil
}

func (s *Server) start() error {
	out, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cp := Jar
	if _, err := os.Stat(logJar); err == nil {
		cp += ":" + logJar
	}
	cmd := exec.Command("java", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.jmx.log4j.disable=true", "-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", cp,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", s.cfg)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // this process dies: so does the server
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zkserver: start java: %w", err)
	}
	s.cmd, s.exit = cmd, make(chan struct{})
	go func(exit chan struct{}) {
		err := cmd.Wait()
		os.WriteFile(filepath.Join(s.dir, "exit"), []byte(fmt.Sprint(err)), 0o644)
		close(exit)
	}(s.exit)
	return nil
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

// Restart starts a killed server again on its data directory and waits
// until it serves.
func (s *Server) Restart() error {
	s.Kill()
	if err := s.start(); err != nil {
		return err
	}
	return s.waitServing()
}

// waitServing polls the srvr four-letter word until the server serves
// requests (standalone, or in a quorum).
func (s *Server) waitServing() error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		if out, err := FourLetter(s.Addr, "srvr"); err == nil && strings.Contains(out, "Mode:") {
			return nil
		}
		select {
		case <-s.exit:
			return fmt.Errorf("zkserver: server %s exited:\n%s", s.Addr, s.Log())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: server %s not serving after 90 s", s.Addr)
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

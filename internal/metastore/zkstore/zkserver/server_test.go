package zkserver

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func require(t *testing.T) {
	if err := Installed(); err != nil {
		if os.Getenv("SAMSA_REQUIRE_ZOOKEEPER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func TestStartRestartKill(t *testing.T) {
	require(t)
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill()
	if out, err := FourLetter(s.Addr, "ruok"); err != nil || out != "imok\n" {
		t.Fatalf("ruok: %q %v", out, err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if out, err := FourLetter(s.Addr, "srvr"); err != nil || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("srvr after restart: %q %v", out, err)
	}
	s.Kill()
	if _, err := FourLetter(s.Addr, "ruok"); err == nil {
		t.Fatal("killed server still answers")
	}
}

// TestServerDiesWithItsStarter SIGKILLs a process that started a server
// (this test binary run again, as a command would): the server's process
// must end too.
func TestServerDiesWithItsStarter(t *testing.T) {
	if dir := os.Getenv("ZKSERVER_HELPER_DIR"); dir != "" {
		s, err := Start(dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(s.Addr, s.cmd.Process.Pid)
		select {} // until killed
	}
	require(t)
	helper := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsStarter$")
	helper.Env = append(os.Environ(), "ZKSERVER_HELPER_DIR="+t.TempDir())
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	var addr string
	var pid int
	if _, serr := fmt.Sscan(line, &addr, &pid); err != nil || serr != nil {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("helper: %q %v %v", line, err, serr)
	}
	helper.Process.Kill()
	helper.Wait()
	for deadline := time.Now().Add(20 * time.Second); alive(pid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("server %s (pid %d) outlived the process that started it", addr, pid)
		}
	}
}

// alive reports a process that exists and is no zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

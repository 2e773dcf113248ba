package main

// Reading a process's CPU time and the machine's load average from /proc,
// for the figures that hold from machine to machine (CPU-seconds per GB
// moved) and for saying how busy the machine was.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// parseProcStat returns utime and stime, in clock ticks, from the contents
// of /proc/<pid>/stat. The second field, the command name in parentheses,
// may itself hold spaces and parentheses, so the fields are counted from the
// last ')'.
func parseProcStat(b []byte) (utime, stime uint64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("procstat: no command name in %q", b)
	}
	// After the name: state (field 3) ... utime (14), stime (15).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("procstat: %d fields after the command name, want at least 13", len(f))
	}
	if utime, err = strconv.ParseUint(f[11], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("procstat: utime: %w", err)
	}
	if stime, err = strconv.ParseUint(f[12], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("procstat: stime: %w", err)
	}
	return utime, stime, nil
}

// clockTicks is the kernel's USER_HZ (getconf CLK_TCK), 100 where getconf
// is missing: 100 on every Linux architecture Go supports.
var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	hz, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || hz <= 0 {
		return 100
	}
	return hz
}()

// procCPU is the user+system CPU-seconds process pid has used so far
// (pid 0: this process).
func procCPU(pid int) (float64, error) {
	path := "/proc/self/stat"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/stat", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	ut, st, err := parseProcStat(b)
	if err != nil {
		return 0, err
	}
	return float64(ut+st) / clockTicks, nil
}

// uptimeLine is `uptime`'s output, or the load averages of /proc/loadavg
// where the command is missing.
func uptimeLine() string {
	if out, err := exec.Command("uptime").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average: unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average: unknown"
	}
	return "load average: " + strings.Join(f[:3], ", ")
}

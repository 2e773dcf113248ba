package main

// Option parsing shared by the Kafka-style tools (samsa topics,
// leader-election, reassign-partitions), as Kafka's tools get it from
// joptsimple: --name value or --name=value, unique abbreviations accepted.
// Also their shared plumbing: usage errors (message and usage on stderr,
// or stdout for --help) and the process exit code.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// usageError is a command-line mistake: its message, then the usage, go to
// stderr and the exit code is code (0 for --help).
type usageError struct {
	msg  string
	code int
}

func (e *usageError) Error() string { return e.msg }

// runTool runs a tool's main on the process's streams and exits with its
// code unless that is 0.
func runTool(toolMain func(args []string, stdout, stderr io.Writer) int, args []string) error {
	if code := toolMain(args, os.Stdout, os.Stderr); code != 0 {
		os.Exit(code)
	}
	return nil
}

// printUsageError prints a usageError's message and then usage, to stdout
// when its code is 0 (--help) and to stderr otherwise, and returns that
// code. For any other err it prints nothing and ok is false.
func printUsageError(err error, usage string, stdout, stderr io.Writer) (code int, ok bool) {
	var ue *usageError
	if !errors.As(err, &ue) {
		return 0, false
	}
	w := stderr
	if ue.code == 0 {
		w = stdout
	}
	fmt.Fprintln(w, ue.msg)
	fmt.Fprint(w, usage)
	return ue.code, true
}

// scanOptions splits args into option values, flags naming whether an
// option takes a value; an option without one maps to [""]. Arguments that
// are not options are ignored, as joptsimple leaves them to the tool.
func scanOptions(args []string, flags map[string]bool) (map[string][]string, error) {
	vals := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		full, err := resolveOption(name, flags)
		if err != nil {
			return nil, err
		}
		if !flags[full] {
			if hasValue {
				return nil, fmt.Errorf("Option %s does not take an argument", full)
			}
			vals[full] = append(vals[full], "")
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("Option %s requires an argument", full)
			}
			i++
			value = args[i]
		}
		vals[full] = append(vals[full], value)
	}
	return vals, nil
}

// resolveOption finds the option named, or uniquely abbreviated, by name.
func resolveOption(name string, flags map[string]bool) (string, error) {
	if _, ok := flags[name]; ok {
		return name, nil
	}
	var found []string
	for f := range flags {
		if name != "" && strings.HasPrefix(f, name) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%s is not a recognized option", name)
	}
	slices.Sort(found)
	return "", fmt.Errorf("Option %s is ambiguous; possibilities: %s", name, strings.Join(found, ", "))
}

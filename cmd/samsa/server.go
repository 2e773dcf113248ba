package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/samsa-kafka/samsa/internal/broker"
	"github.com/samsa-kafka/samsa/internal/config"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func newLogger() *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("SAMSA_LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// runServer is `samsa server --config server.properties --override k=v`.
func runServer(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	path := fs.String("config", "", "Kafka-style server.properties file (required)")
	var overrides multiFlag
	fs.Var(&overrides, "override", "key=value that overrides the file (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" && fs.NArg() > 0 { // kafka-server-start.sh habit: the file as an argument
		*path = fs.Arg(0)
	}
	if *path == "" {
		return fmt.Errorf("server: --config is required")
	}
	cfg, warnings, err := config.LoadFile(*path, overrides)
	if err != nil {
		return err
	}
	return serve(cfg, warnings)
}

// runDev is `samsa dev`: a local broker with its data under a folder.
func runDev(args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	dir := fs.String("dir", "samsa-data", "folder for the data")
	port := fs.Int("port", 9092, "port of the broker")
	if err := fs.Parse(args); err != nil {
		return err
	}
	props := map[string]string{
		"broker.id":                       "0",
		"listeners":                       fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", *port),
		"log.dirs":                        filepath.Join(*dir, "broker-0"),
		"log.retention.check.interval.ms": "10000",
		"file.delete.delay.ms":            "10000",
	}
	cfg, warnings, err := config.Load(props)
	if err != nil {
		return err
	}
	return serve(cfg, warnings)
}

func serve(cfg *config.Broker, warnings []string) error {
	logger := newLogger()
	for _, w := range warnings {
		logger.Warn(w)
	}
	b, err := broker.Start(cfg, broker.Options{Logger: logger})
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	logger.Info("shutting down", "signal", s.String())
	return b.Close()
}

package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/samsa-kafka/samsa/internal/broker"
	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
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

// runDev is `samsa dev`: an embedded store and N brokers on consecutive
// ports in one process, with their data under one folder.
func runDev(args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	dir := fs.String("dir", "samsa-data", "folder for the data")
	port := fs.Int("port", 9092, "port of the first broker")
	n := fs.Int("brokers", 3, "number of brokers")
	metricsAddr := fs.String("metrics", "", "serve every broker's Prometheus metrics, labeled broker=\"<id>\", at http://host:port/metrics (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := newLogger()
	var reg *prometheus.Registry
	if *metricsAddr != "" {
		r, stop, err := serveMetrics(*metricsAddr, logger)
		if err != nil {
			return err
		}
		defer stop()
		reg = r
	}
	srv, err := embedetcd.StartLocal(filepath.Join(*dir, "store"), logger.With("component", "embedded-store"))
	if err != nil {
		return err
	}
	defer srv.Close()
	store, err := etcdstore.ConnectMaxOps(srv.Endpoints(), "", 10*time.Second, logger.With("component", "store"), embedetcd.MaxTxnOps)
	if err != nil {
		return err
	}
	defer store.Close()
	var brokers []*broker.Broker
	defer func() {
		for _, b := range brokers {
			b.Close()
		}
	}()
	for i := range *n {
		props := map[string]string{
			"broker.id":                                strconv.Itoa(i),
			"listeners":                                fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", *port+i),
			"log.dirs":                                 filepath.Join(*dir, fmt.Sprintf("broker-%d", i)),
			"log.retention.check.interval.ms":          "10000",
			"log.segment.delete.delay.ms":              "10000",
			"default.replication.factor":               strconv.Itoa(min(3, *n)),
			"offsets.topic.replication.factor":         strconv.Itoa(min(3, *n)),
			"transaction.state.log.replication.factor": strconv.Itoa(min(3, *n)),
			"transaction.state.log.min.isr":            strconv.Itoa(min(2, *n)),
		}
		cfg, warnings, err := config.Load(props)
		if err != nil {
			return err
		}
		for _, w := range warnings {
			logger.Warn(w)
		}
		opts := broker.Options{Logger: logger, Store: store}
		if reg != nil { // one registry, each broker's series labeled with its id
			opts.Registry = prometheus.WrapRegistererWith(prometheus.Labels{"broker": strconv.Itoa(i)}, reg)
		}
		b, err := broker.Start(cfg, opts)
		if err != nil {
			return err
		}
		brokers = append(brokers, b)
	}
	logger.Info("dev cluster ready", "brokers", *n, "bootstrap", fmt.Sprintf("127.0.0.1:%d", *port), "store", srv.Endpoints())
	waitForSignal(logger)
	return nil
}

func waitForSignal(logger *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	logger.Info("shutting down", "signal", s.String())
}

func serve(cfg *config.Broker, warnings []string) error {
	logger := newLogger()
	for _, w := range warnings {
		logger.Warn(w)
	}
	opts := broker.Options{Logger: logger}
	if cfg.MetricsListener != "" {
		reg, stop, err := serveMetrics(cfg.MetricsListener, logger)
		if err != nil {
			return err
		}
		defer stop()
		opts.Registry = reg
	}
	b, err := broker.Start(cfg, opts)
	if err != nil {
		return err
	}
	waitForSignal(logger)
	return b.Close()
}

// serveMetrics serves a registry's metrics, with the Go runtime's and the
// process's, at http://addr/metrics (metrics.listener) until stop.
func serveMetrics(addr string, logger *slog.Logger) (reg *prometheus.Registry, stop func(), err error) {
	reg = prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics.listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return reg, func() { srv.Close() }, nil
}

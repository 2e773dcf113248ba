// Command samsa-kfake runs franz-go's kfake (an in-memory fake Kafka
// cluster) as a process of its own, so that a benchmark's client does not
// share its CPU and garbage collector with it (cmd/samsa-bench).
//
//	samsa-kfake [-port 0] [-brokers 1] [-max-lifetime 1h] [-data-dir DIR] [-stdin]
//
// It prints the first broker's address ("host:port") as the first line of
// standard output once it listens, and serves until SIGTERM or SIGINT, until
// -max-lifetime has passed, or, with -stdin, until its standard input closes
// (a parent holding the other end of a pipe takes it along when it dies).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "listen port of the first broker on 127.0.0.1 (0: any free port)")
	brokers := flag.Int("brokers", 1, "brokers in the cluster")
	lifetime := flag.Duration("max-lifetime", time.Hour, "exit after this long in any case")
	dataDir := flag.String("data-dir", "", "persist to this directory (kfake.DataDir); empty: in memory")
	watchStdin := flag.Bool("stdin", false, "also exit when standard input closes")
	flag.Parse()

	opts := []kfake.Opt{kfake.NumBrokers(*brokers)}
	if *port != 0 {
		ports := []int{*port}
		for i := 1; i < *brokers; i++ {
			ports = append(ports, 0)
		}
		opts = append(opts, kfake.Ports(ports...))
	}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "samsa-kfake:", err)
		os.Exit(1)
	}
	fmt.Println(c.ListenAddrs()[0])

	done := make(chan string, 3)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { done <- (<-sig).String() }()
	if *watchStdin {
		go func() { io.Copy(io.Discard, os.Stdin); done <- "stdin closed" }()
	}
	go func() { time.Sleep(*lifetime); done <- "max lifetime" }()
	why := <-done
	c.Close()
	fmt.Fprintln(os.Stderr, "samsa-kfake: stopped:", why)
}

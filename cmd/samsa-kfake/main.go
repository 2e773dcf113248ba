// Command samsa-kfake runs franz-go's kfake (an in-memory fake Kafka
// cluster) as a process of its own, so that a benchmark's client does not
// share its CPU and garbage collector with it (cmd/samsa-bench).
//
//	samsa-kfake [-port 0] [-brokers 1] [-max-lifetime 1h] [-data-dir DIR] [-stdin] [-discard]
//
// With -discard it answers every Produce at once and keeps none of its
// records: samsa-bench -replication paces it as the floor of what the
// machine and the client cost (kfake-all).
//
// It prints the first broker's address ("host:port") as the first line of
// standard output once it listens, and serves until SIGTERM or SIGINT, until
// -max-lifetime has passed, or, with -stdin, until its standard input closes
// (a parent holding the other end of a pipe takes it along when it dies).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	port := flag.Int("port", 0, "listen port of the first broker on 127.0.0.1 (0: any free port)")
	brokers := flag.Int("brokers", 1, "brokers in the cluster")
	lifetime := flag.Duration("max-lifetime", time.Hour, "exit after this long in any case")
	dataDir := flag.String("data-dir", "", "persist to this directory (kfake.DataDir); empty: in memory")
	watchStdin := flag.Bool("stdin", false, "also exit when standard input closes")
	discard := flag.Bool("discard", false, "answer Produce at once without keeping the records")
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
	if *discard {
		discardProduce(c)
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

// discardProduce makes c answer every Produce request at once, keeping
// none of its records.
func discardProduce(c *kfake.Cluster) {
	d := &discarder{next: map[string][]int64{}}
	c.ControlKey(kmsg.Produce.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return d.produce(req.(*kmsg.ProduceRequest)), nil, true
	})
}

// discarder answers Produce requests without keeping their records: every
// partition succeeds, its base offset counting the records answered
// before (kfake runs control functions one at a time).
type discarder struct {
	next map[string][]int64 // by topic, by partition: the next offset
}

func (d *discarder) produce(req *kmsg.ProduceRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			if rp.Partition < 0 || rp.Partition >= 1<<16 {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			next := d.next[rt.Topic]
			for int(rp.Partition) >= len(next) {
				next = append(next, 0)
			}
			sp.BaseOffset, sp.LogAppendTime = next[rp.Partition], -1
			next[rp.Partition] += records(rp.Records)
			d.next[rt.Topic] = next
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// records counts the records of the batches in b by their headers' last
// offset delta.
func records(b []byte) int64 {
	n := int64(0)
	for len(b) >= 27 {
		size := 12 + int(int32(binary.BigEndian.Uint32(b[8:])))
		n += int64(int32(binary.BigEndian.Uint32(b[23:]))) + 1
		if size < 27 || size > len(b) {
			break
		}
		b = b[size:]
	}
	return n
}

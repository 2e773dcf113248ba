// Command samsa is the Samsa binary: the broker server, a ready-made local
// setup for newcomers, and admin subcommands.
package main

import (
	"fmt"
	"os"
)

const usage = `samsa — a Kafka-compatible distributed log

Usage:
  samsa server --config server.properties [--override key=value ...]
  samsa store [--data-dir DIR] [--listen-client-urls URL] [--initial-cluster ...]
  samsa dev [--dir ./samsa-data] [--brokers 3] [--port 9092] [--metrics HOST:PORT]
  samsa topics --bootstrap-server HOST:PORT --create|--delete|--list|--describe|--alter ...
  samsa leader-election --bootstrap-server HOST:PORT --election-type preferred|unclean --all-topic-partitions|--topic T --partition P|--path-to-json-file F
  samsa reassign-partitions --bootstrap-server HOST:PORT --execute|--verify|--cancel --reassignment-json-file F | --generate --topics-to-move-json-file F --broker-list 0,1,2 | --list
  samsa consumer-groups --bootstrap-server HOST:PORT --list|--describe|--reset-offsets|--delete|--delete-offsets ...
  samsa transactions --bootstrap-server HOST:PORT list | describe --transactional-id ID
  samsa delete-records --bootstrap-server HOST:PORT --offset-json-file F
  samsa log-dirs --describe --bootstrap-server HOST:PORT [--broker-list 0,1,2] [--topic-list t1,t2]
  samsa configs --bootstrap-server HOST:PORT --describe [--all] | --alter --add-config k=v,... --delete-config k --entity-type topics|brokers|users|clients --entity-name N|--entity-default
  samsa version

Run 'samsa <command> --help' for a command's flags.
`

var version = "dev"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "server":
		err = runServer(args)
	case "dev":
		err = runDev(args)
	case "store":
		err = runStore(args)
	case "topics":
		err = runTopics(args)
	case "leader-election":
		err = runLeaderElection(args)
	case "reassign-partitions":
		err = runReassign(args)
	case "consumer-groups":
		err = runConsumerGroups(args)
	case "transactions":
		err = runTransactions(args)
	case "delete-records":
		err = runDeleteRecords(args)
	case "log-dirs":
		err = runLogDirs(args)
	case "configs":
		err = runConfigs(args)
	case "version", "--version":
		fmt.Println("samsa", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "samsa: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "samsa:", err)
		os.Exit(1)
	}
}

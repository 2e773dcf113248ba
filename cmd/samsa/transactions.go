package main

// samsa transactions: kafka-transactions.sh (Kafka 3.x) over the Kafka
// protocol, through franz-go's kadm: `list` (every broker's
// ListTransactions) and `describe --transactional-id ID`
// (DescribeTransactions at the id's coordinator), as subcommands like
// Kafka's tool or as --list / --describe. Output is Kafka's: a
// tab-aligned table with Kafka's column names.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const txnsUsage = `Usage: samsa transactions --bootstrap-server HOST:PORT
  list | --list
  describe | --describe --transactional-id ID
`

var txnsFlags = map[string]bool{
	"bootstrap-server": true, "transactional-id": true, "command-config": true,
	"list": false, "describe": false, "help": false,
}

type txnsOpts struct {
	bootstrap, action, id string
}

func runTransactions(args []string) error { return runTool(txnsMain, args) }

func txnsMain(args []string, stdout, stderr io.Writer) int {
	o, err := parseTxnsArgs(args)
	if code, ok := printUsageError(err, txnsUsage, stdout, stderr); ok {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), topicsTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...))
	if err != nil {
		fmt.Fprintln(stderr, "Error: "+err.Error())
		return 1
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if o.action == "list" {
		lt, err := adm.ListTransactions(ctx, nil, nil)
		if err != nil {
			fmt.Fprintln(stdout, "Error: "+errorText(err))
			return 1
		}
		printListedTxns(stdout, lt)
		return 0
	}
	d, err := adm.DescribeTransactions(ctx, o.id)
	if err == nil {
		err = d[o.id].Err
	}
	if err != nil {
		fmt.Fprintln(stdout, "Error: "+errorText(err))
		return 1
	}
	printDescribedTxn(stdout, d[o.id], time.Now())
	return 0
}

func parseTxnsArgs(args []string) (*txnsOpts, error) {
	if len(args) == 0 {
		return nil, &usageError{"This tool is used to analyze the transactional state of producers in the cluster.", 1}
	}
	vals, err := scanOptions(args, txnsFlags)
	if err != nil {
		return nil, &usageError{err.Error(), 1}
	}
	if vals["help"] != nil {
		return nil, &usageError{"This tool is used to analyze the transactional state of producers in the cluster.", 0}
	}
	o := &txnsOpts{}
	var actions []string
	for _, a := range []string{"list", "describe"} {
		if vals[a] != nil {
			actions = append(actions, a)
		}
	}
	for _, a := range args { // Kafka's subcommand form
		if a == "list" || a == "describe" {
			actions = append(actions, a)
		}
	}
	if len(actions) != 1 {
		return nil, &usageError{"Command must include exactly one action: list, describe", 1}
	}
	o.action = actions[0]
	b := vals["bootstrap-server"]
	if len(b) == 0 {
		return nil, &usageError{"Missing required argument \"[bootstrap-server]\"", 1}
	}
	o.bootstrap = b[len(b)-1]
	if o.action == "describe" {
		ids := vals["transactional-id"]
		if len(ids) == 0 {
			return nil, &usageError{"Missing required argument \"[transactional-id]\"", 1}
		}
		o.id = ids[len(ids)-1]
	}
	return o, nil
}

// printListedTxns is Kafka's ListTransactionsCommand table.
func printListedTxns(w io.Writer, lt kadm.ListedTransactions) {
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	fmt.Fprintln(tw, "TransactionalId\tCoordinator\tProducerId\tTransactionState")
	for _, t := range lt.Sorted() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", t.TxnID, t.Coordinator, t.ProducerID, t.State)
	}
	tw.Flush()
}

// printDescribedTxn is Kafka's DescribeTransactionsCommand table: the
// start time and duration are "None" without a transaction.
func printDescribedTxn(w io.Writer, d kadm.DescribedTransaction, now time.Time) {
	start, dur := "None", "None"
	if d.StartTimestamp >= 0 {
		start = strconv.FormatInt(d.StartTimestamp, 10)
		dur = strconv.FormatInt(now.UnixMilli()-d.StartTimestamp, 10)
	}
	var tps []string
	for _, tp := range d.Topics.Sorted() {
		for _, p := range tp.Partitions {
			tps = append(tps, fmt.Sprintf("%s-%d", tp.Topic, p))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	fmt.Fprintln(tw, "CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\tTransactionState\tTransactionTimeoutMs\tCurrentTransactionStartTimeMs\tTransactionDurationMs\tTopicPartitions")
	fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\n", d.Coordinator, d.TxnID, d.ProducerID, d.ProducerEpoch, d.State,
		d.TimeoutMillis, start, dur, strings.Join(tps, ","))
	tw.Flush()
}

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestParseTxnsArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		action string
		id     string
		err    string
	}{
		{args: []string{"--bootstrap-server", "h:1", "list"}, action: "list"},
		{args: []string{"--bootstrap-server", "h:1", "--list"}, action: "list"},
		{args: []string{"--bootstrap-server", "h:1", "describe", "--transactional-id", "tx"}, action: "describe", id: "tx"},
		{args: []string{"--bootstrap-server=h:1", "--describe", "--transactional-id=tx"}, action: "describe", id: "tx"},
		{args: []string{"--bootstrap-server", "h:1", "describe"}, err: "transactional-id"},
		{args: []string{"--bootstrap-server", "h:1"}, err: "exactly one action"},
		{args: []string{"list"}, err: "bootstrap-server"},
	} {
		o, err := parseTxnsArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || o.action != tc.action || o.id != tc.id || o.bootstrap != "h:1" {
			t.Errorf("%v: %+v %v", tc.args, o, err)
		}
	}
}

func TestPrintTxns(t *testing.T) {
	var b bytes.Buffer
	printListedTxns(&b, kadm.ListedTransactions{"b": {Coordinator: 1, TxnID: "b", ProducerID: 7, State: "Ongoing"},
		"a": {Coordinator: 0, TxnID: "a", ProducerID: 5, State: "Empty"}})
	want := "TransactionalId Coordinator ProducerId TransactionState\n" +
		"a               0           5          Empty\n" +
		"b               1           7          Ongoing\n"
	if b.String() != want {
		t.Errorf("list:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	d := kadm.DescribedTransaction{Coordinator: 2, TxnID: "tx", State: "Ongoing", TimeoutMillis: 60000, StartTimestamp: 1000,
		ProducerID: 9, ProducerEpoch: 1, Topics: kadm.TopicsSet{"t": {1: {}, 0: {}}}}
	printDescribedTxn(&b, d, time.UnixMilli(3500))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if f := strings.Fields(lines[1]); len(lines) != 2 || strings.Join(f, " ") != "2 tx 9 1 Ongoing 60000 1000 2500 t-0,t-1" {
		t.Errorf("describe:\n%s", b.String())
	}
}

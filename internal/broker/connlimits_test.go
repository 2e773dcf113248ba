package broker

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// max.connections.per.ip from server.properties bounds the connections a
// broker keeps from one address (its own inter-broker ones from the same
// loopback address included): connections are opened until one is closed
// by the broker; a cluster-wide dynamic change (AlterConfigs at <default>)
// raises the limit at run time, and a bad override is refused with
// INVALID_CONFIG before it is stored.
func TestConnectionsPerIP(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"max.connections.per.ip": "6"})
	addr := b.Addr().String()
	// open dials and asks ApiVersions, keeping the connection in conns;
	// false if the broker closed it instead of answering.
	var conns []net.Conn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	defer closeAll()
	open := func() bool {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1)); err != nil {
			return false // reset by the broker's close
		}
		var size [4]byte
		_, err = io.ReadFull(c, size[:])
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isReset(err) {
			t.Fatalf("reading: %v", err)
		}
		return err == nil
	}
	opened := 0
	for opened < 10 && open() {
		opened++
	}
	if opened == 0 || opened == 10 {
		t.Fatalf("%d connections opened before one was refused, want 1 to 6", opened)
	}
	// Room for the admin client: the broker lets go of the closed ones as
	// it reads their ends, so until then an admin connection may still be
	// refused like the last one above; alter retries those.
	closeAll()
	adm := kadm.NewClient(newClient(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alter := func(name, value string) (kadm.AlterConfigsResponses, error) {
		for {
			res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: &value}})
			if err == nil || ctx.Err() != nil {
				return res, err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	res, err := alter("max.connections.per.ip.overrides", "127.0.0.1:x")
	if err != nil || len(res) != 1 || res[0].Err == nil {
		t.Fatalf("bad override accepted: %v %+v", err, res)
	}
	res, err = alter("max.connections.per.ip", "100")
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("raising max.connections.per.ip: %v %+v", err, res)
	}
	for deadline := time.Now().Add(10 * time.Second); !open(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a new connection still refused after max.connections.per.ip was raised")
		}
	}
	for range 10 {
		if !open() {
			t.Fatal("a connection refused under the raised limit")
		}
	}
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

// max.connection.creation.rate from server.properties: at 1 per second
// over two 1 s windows, of two connections opened together the second is
// taken on about a second after the first.
func TestConnectionCreationRate(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"max.connection.creation.rate": "1", "quota.window.num": "2"})
	answered := make(chan time.Time, 2)
	for range 2 {
		go func() {
			rawRequest(t, b.Addr().String(), kmsg.NewPtrApiVersionsRequest())
			answered <- time.Now()
		}()
	}
	first, second := <-answered, <-answered
	if gap := second.Sub(first); gap < 300*time.Millisecond {
		t.Fatalf("the two connections were answered %v apart: not throttled", gap)
	}
}

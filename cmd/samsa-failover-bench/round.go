package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/controller"
	"github.com/samsa-kafka/samsa/internal/controller/channel"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zkserver"
)

// result is one row of the table.
type result struct {
	store              string // etcd or zookeeper
	partitions, topics int
	load               time.Duration
	cold               time.Duration // Startup → UpdateMetadata epoch 1 at every stand-in
	revoke             time.Duration // the old controller's session.Close call
	active             time.Duration // session end → new controller active (context loaded)
	firstUM            time.Duration // session end → the new controller's first UpdateMetadata at every live stand-in
	failover           time.Duration // session end → UpdateMetadata with every partition at every live stand-in
	crashLed           int           // -mode crash: partitions the crashed broker led
	crash              time.Duration // -mode crash: session end → all of them shown with new leaders at every live stand-in
	umPartitions       int
	keys               int64
}

// round is one partition count on one store, from an empty store to a
// measured failover. Everything it starts it stops before returning.
type round struct {
	o      options
	kind   string // etcd or zookeeper
	lay    layout
	log    *slog.Logger
	dir    string
	srv    *embedetcd.Server // kind etcd
	zk     *zkserver.Server  // kind zookeeper
	stores []metastore.Store // per stand-in, index id-1
	sess   []metastore.Session
	ctrl   []*candidate
	stand  []*standIn
	notify chan struct{}

	mu       sync.Mutex
	activeAt map[int32]time.Time // node id → when it last became active
}

// candidate is a controller with its loop and sender.
type candidate struct {
	id   int32
	c    *controller.Controller
	cm   *channel.Manager
	sess metastore.Session // the session it campaigns with
	stop context.CancelFunc
	done chan struct{}
}

func runRound(o options, kind string, n int, log *slog.Logger) (res result, err error) {
	r := &round{o: o, kind: kind, log: log, notify: make(chan struct{}, 1), activeAt: map[int32]time.Time{},
		lay: layout{partitions: n, perTopic: o.perTopic, rf: o.rf, brokers: o.brokers}}
	defer r.shutdown()
	res.store, res.partitions, res.topics = kind, n, r.lay.topics()
	if err := r.startStore(); err != nil {
		return res, err
	}
	if res.load, err = r.load(); err != nil {
		return res, err
	}
	fmt.Printf("  loaded %d partitions in %d topics in %v\n", n, res.topics, res.load.Round(time.Millisecond))
	if err := r.startBrokers(); err != nil {
		return res, err
	}
	if res.cold, err = r.coldStart(); err != nil {
		return res, err
	}
	fmt.Printf("  cold start: UpdateMetadata (epoch 1) at all %d stand-ins %v after Startup\n", len(r.stand), res.cold.Round(time.Millisecond))
	time.Sleep(o.settle)
	// Everything here shares one heap (the store, both controllers, the
	// stand-ins); what loading and the cold start left to collect is
	// collected before the clock starts, as testing does before a
	// benchmark run.
	runtime.GC()
	if o.crash {
		err = r.brokerCrash(&res)
	} else {
		err = r.failover(&res)
	}
	if err != nil {
		return res, err
	}
	res.keys, err = r.countKeys()
	return res, err
}

// startStore starts an embedded etcd, as samsa dev does, or a standalone
// ZooKeeper server process (killed by shutdown, or by the kernel if this
// process dies first).
func (r *round) startStore() error {
	dir, err := os.MkdirTemp("", "samsa-failover-bench-")
	if err != nil {
		return err
	}
	r.dir = dir
	if r.kind == "zookeeper" {
		zdir := filepath.Join(dir, "zookeeper")
		if err := os.Mkdir(zdir, 0o755); err != nil {
			return err
		}
		r.zk, err = zkserver.Start(zdir)
		return err
	}
	r.srv, err = embedetcd.StartLocal(filepath.Join(dir, "etcd"), r.o.etcdLog)
	return err
}

// connect opens a store client: on ZooKeeper with the stand-ins' session
// timeout for its own connection, and the store's default limits
// (MaxTxnOps 64, jute.maxbuffer 1 MiB).
func (r *round) connect() (metastore.Store, error) {
	if r.kind == "zookeeper" {
		return zkstore.Connect(zkstore.Config{Servers: []string{r.zk.Addr}, SessionTimeout: r.o.sessionTimeout, Logger: r.log})
	}
	return etcdstore.ConnectMaxOps(r.srv.Endpoints(), "", 10*time.Second, r.log, embedetcd.MaxTxnOps)
}

func (r *round) load() (time.Duration, error) {
	s, err := r.connect()
	if err != nil {
		return 0, err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), r.o.loadTimeout)
	defer cancel()
	start := time.Now()
	err = load(ctx, s, r.lay, r.o.writers)
	return time.Since(start), err
}

// startBrokers starts the stand-ins and registers each with its own store
// client and session.
func (r *round) startBrokers() error {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.wait)
	defer cancel()
	for id := int32(1); id <= int32(r.o.brokers); id++ {
		s, err := r.connect()
		if err != nil {
			return err
		}
		r.stores = append(r.stores, s)
		sess, err := s.NewSession(ctx, r.o.sessionTimeout)
		if err != nil {
			return err
		}
		r.sess = append(r.sess, sess)
		si, err := startStandIn(id, r.notify)
		if err != nil {
			return err
		}
		si.want = r.lay.partitions
		r.stand = append(r.stand, si)
		b := metadata.NewBroker(id, []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: si.port(), Protocol: "PLAINTEXT"}}, "", time.Now())
		if _, err := metadata.New(s).RegisterBroker(ctx, sess, b); err != nil {
			return err
		}
	}
	return nil
}

// coldStart starts the candidates (nodes 1 and 2) and waits for the first
// controller's UpdateMetadata at every stand-in.
func (r *round) coldStart() (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.wait)
	defer cancel()
	start := time.Now()
	for id := int32(1); id <= 2; id++ {
		if err := r.startCandidate(ctx, id); err != nil {
			return 0, err
		}
	}
	last, err := waitUM(ctx, r.notify, r.stand, 1, true)
	if err != nil {
		return 0, err
	}
	if last.partitions != r.lay.partitions {
		return 0, fmt.Errorf("cold start: UpdateMetadata carried %d partitions, want %d", last.partitions, r.lay.partitions)
	}
	return last.at.Sub(start), nil
}

func (r *round) startCandidate(ctx context.Context, id int32) error {
	store := r.stores[id-1]
	sess := r.sess[id-1]
	if !r.o.sharedSession {
		var err error
		if sess, err = store.NewSession(ctx, r.o.sessionTimeout); err != nil {
			return err
		}
	}
	cm := channel.NewManager(r.log, 30*time.Second, "PLAINTEXT")
	c := controller.New(controller.Config{NodeID: id, Store: store, Sender: cm, Logger: r.log, StateChange: r.o.stateChange,
		OnChange: func(_ int32, active bool) {
			if active {
				r.mu.Lock()
				r.activeAt[id] = time.Now()
				r.mu.Unlock()
			}
		}})
	loop := controller.NewLoop(c)
	lctx, stop := context.WithCancel(context.Background())
	cd := &candidate{id: id, c: c, cm: cm, sess: sess, stop: stop, done: make(chan struct{})}
	r.ctrl = append(r.ctrl, cd)
	go func() {
		defer close(cd.done)
		loop.Run(lctx)
	}()
	loop.Enqueue(controller.Startup{Session: sess})
	return nil
}

// kill stops the candidate's loop and sender (idempotent).
func (cd *candidate) kill() {
	cd.stop()
	<-cd.done
	cd.cm.Close()
}

func (r *round) activeCandidate() *candidate {
	for _, cd := range r.ctrl {
		if cd.c.IsActive() {
			return cd
		}
	}
	return nil
}

// failover kills the active controller (stops its loop and sender, as
// SIGKILL would), ends its session and waits for the new
// controller's UpdateMetadata at every live stand-in.
func (r *round) failover(res *result) error {
	old := r.activeCandidate()
	if old == nil {
		return fmt.Errorf("failover: no active controller after the cold start")
	}
	live := r.stand
	if r.o.sharedSession { // the old controller's broker dies with it
		live = nil
		for _, s := range r.stand {
			if s.id != old.id {
				live = append(live, s)
			}
		}
	}
	stopProfile, err := r.startProfile()
	if err != nil {
		return err
	}
	old.kill() // a crashed process: its loop and sender gone before its session ends
	t0 := time.Now()
	err = old.sess.Close()
	res.revoke = time.Since(t0)
	if err != nil {
		stopProfile()
		return fmt.Errorf("failover: end the old controller's session: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.o.wait)
	defer cancel()
	first, err := waitUM(ctx, r.notify, live, 2, false)
	if err != nil {
		stopProfile()
		return err
	}
	last, err := waitUM(ctx, r.notify, live, 2, true)
	stopProfile()
	if err != nil {
		return err
	}
	res.firstUM = first.at.Sub(t0)
	res.failover, res.umPartitions = last.at.Sub(t0), last.partitions
	if nc := r.activeCandidate(); nc != nil {
		r.mu.Lock()
		res.active = r.activeAt[nc.id].Sub(t0)
		r.mu.Unlock()
		fmt.Printf("  failover: node %d → node %d; new controller active %v; its first UpdateMetadata (epoch 2) at %d live stand-ins %v, every partition (%d) %v after the session end (revoke call %v)\n",
			old.id, nc.id, res.active.Round(time.Millisecond), len(live), res.firstUM.Round(time.Millisecond), last.partitions,
			res.failover.Round(time.Millisecond), res.revoke.Round(time.Millisecond))
	}
	return nil
}

// brokerCrash ends the session of the last stand-in (never a controller
// candidate) after closing its listener, as a SIGKILLed broker, and waits
// until every live stand-in has UpdateMetadata showing a new leader for each
// partition it led.
func (r *round) brokerCrash(res *result) error {
	victim := r.stand[len(r.stand)-1]
	live := r.stand[:len(r.stand)-1]
	for _, s := range live {
		res.crashLed = s.watchCrash(victim.id)
	}
	if res.crashLed == 0 {
		return fmt.Errorf("crash: broker %d leads no partition", victim.id)
	}
	stopProfile, err := r.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	victim.close()
	t0 := time.Now()
	if err := r.sess[victim.id-1].Close(); err != nil {
		return fmt.Errorf("crash: end broker %d's session: %w", victim.id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.o.wait)
	defer cancel()
	for {
		var last time.Time
		all := true
		for _, s := range live {
			a, ok := s.crashHandled()
			if !ok {
				all = false
				break
			}
			if a.at.After(last) {
				last = a.at
			}
		}
		if all {
			res.crash = last.Sub(t0)
			break
		}
		select {
		case <-r.notify:
		case <-ctx.Done():
			return fmt.Errorf("crash: new leaders never shown: %w", ctx.Err())
		}
	}
	fmt.Printf("  broker %d crashed: %d partitions it led shown with new leaders at %d live stand-ins %v after its session end (%.1f µs/partition)\n",
		victim.id, res.crashLed, len(live), res.crash.Round(time.Millisecond), float64(res.crash.Microseconds())/float64(res.crashLed))
	return nil
}

func (r *round) startProfile() (stop func(), err error) {
	if r.o.memProfile != "" {
		return r.startMemProfile()
	}
	if r.o.cpuProfile == "" {
		return func() {}, nil
	}
	path := r.profilePath(r.o.cpuProfile)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		fmt.Printf("  CPU profile of the failover: %s\n", path)
	}, nil
}

// startMemProfile writes the allocation profile now (<path>.base) and when
// stop is called (<path>): their difference is what the phase allocated.
func (r *round) startMemProfile() (stop func(), err error) {
	path := r.profilePath(r.o.memProfile)
	write := func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	if err := write(path + ".base"); err != nil {
		return nil, err
	}
	return func() {
		runtime.GC() // the profile is as of the last completed collection
		if err := write(path); err != nil {
			fmt.Fprintf(os.Stderr, "samsa-failover-bench: %v\n", err)
			return
		}
		fmt.Printf("  allocation profiles of the failover: %s.base, %s\n", path, path)
	}, nil
}

func (r *round) profilePath(path string) string {
	if len(r.o.stores) > 1 {
		path += "." + r.kind
	}
	if r.o.multi {
		path = fmt.Sprintf("%s.%d", path, r.lay.partitions)
	}
	return path
}

// countKeys counts the store's keys (on ZooKeeper, znodes holding data:
// not the parents created on the way).
func (r *round) countKeys() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.wait)
	defer cancel()
	kvs, _, err := r.stores[0].List(ctx, "/")
	return int64(len(kvs)), err
}

// shutdown stops, in order: controller loops, their senders, sessions,
// stand-ins, store clients, the store server; then removes the data.
func (r *round) shutdown() {
	for _, cd := range r.ctrl {
		cd.kill()
		if !r.o.sharedSession {
			cd.sess.Close()
		}
	}
	for _, s := range r.sess {
		s.Close()
	}
	for _, s := range r.stand {
		s.close()
	}
	for _, s := range r.stores {
		s.Close()
	}
	if r.srv != nil {
		r.srv.Close()
	}
	if r.zk != nil {
		r.zk.Kill()
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

package group

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The state machine driven event by event: a fake clock, callbacks that
// record answers, a Persist that records writes and completes them when the
// test says.

var t0 = time.Unix(1_700_000_000, 0)

type fixture struct {
	t      *testing.T
	g      *Group
	now    time.Time
	stores []func(error) // pending Persist completions
}

func newFixture(t *testing.T, delay time.Duration) *fixture {
	f := &fixture{t: t, now: t0}
	cfg := &Config{MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute,
		InitialRebalanceDelay: delay, MaxSize: 3}
	f.g = NewGroup("g", cfg, func(_ *Group, _ map[string][]byte, done func(error)) {
		f.stores = append(f.stores, done)
	}, f.now)
	return f
}

func (f *fixture) advance(d time.Duration) { f.now = f.now.Add(d); f.g.Tick(f.now) }

// store completes the oldest pending write.
func (f *fixture) store(err error) {
	f.t.Helper()
	if len(f.stores) == 0 {
		f.t.Fatal("no pending write")
	}
	done := f.stores[0]
	f.stores = f.stores[1:]
	done(err)
}

type joinAnswer struct{ r *JoinResult }

func (a *joinAnswer) done() bool { return a.r != nil }

func req(id string, protocols ...string) JoinRequest {
	r := JoinRequest{MemberID: id, ClientID: "c", RebalanceTimeout: 10 * time.Second,
		SessionTimeout: 10 * time.Second, ProtocolType: "consumer"}
	for _, p := range protocols {
		r.Protocols = append(r.Protocols, Protocol{Name: p, Metadata: []byte(id + p)})
	}
	if len(protocols) == 0 {
		r.Protocols = []Protocol{{Name: "range"}}
	}
	return r
}

func (f *fixture) join(r JoinRequest) *joinAnswer {
	a := &joinAnswer{}
	f.g.Join(r, f.now, func(res JoinResult) { a.r = &res })
	return a
}

// joinNew does the KIP-394 round trip and returns the pending answer.
func (f *fixture) joinNew(protocols ...string) *joinAnswer {
	f.t.Helper()
	r := req("", protocols...)
	r.RequireKnownMember = true
	a := f.join(r)
	if !a.done() || !errors.Is(a.r.Err, kerr.MemberIDRequired) || a.r.MemberID == "" {
		f.t.Fatalf("first join: %+v", a.r)
	}
	r.MemberID = a.r.MemberID
	return f.join(r)
}

type syncAnswer struct{ *SyncResult }

func (f *fixture) sync(id string, gen int32, assign map[string][]byte) *syncAnswer {
	out := &syncAnswer{}
	f.g.Sync(SyncRequest{MemberID: id, Generation: gen, Assignments: assign}, f.now, func(r SyncResult) { out.SyncResult = &r })
	return out
}

// settle advances by the initial delay until the join phase is over.
func (f *fixture) settle() {
	for i := 0; i < 10 && f.g.State() == PreparingRebalance; i++ {
		f.advance(f.g.cfg.InitialRebalanceDelay)
	}
}

func (f *fixture) wantState(s State) {
	f.t.Helper()
	if f.g.State() != s {
		f.t.Fatalf("state %v, want %v", f.g.State(), s)
	}
}

// stable brings two members to a Stable generation 1.
func stable(t *testing.T) (*fixture, string, string) {
	f := newFixture(t, 3*time.Second)
	a, b := f.joinNew(), f.joinNew()
	f.advance(3 * time.Second) // b arrived during the delay: one more
	if a.done() {
		t.Fatal("answered before the extended delay")
	}
	f.advance(3 * time.Second)
	if !a.done() || !b.done() || a.r.Generation != 1 {
		t.Fatalf("joins: %+v %+v", a.r, b.r)
	}
	la, lb := a.r.MemberID, b.r.MemberID
	sa := f.sync(la, 1, map[string][]byte{la: []byte("A"), lb: []byte("B")})
	sb := f.sync(lb, 1, nil)
	f.store(nil)
	f.wantState(Stable)
	if sa.SyncResult == nil || string(sa.Assignment) != "A" || sb.SyncResult == nil || string(sb.Assignment) != "B" {
		t.Fatalf("syncs: %+v %+v", sa, sb)
	}
	return f, la, lb
}

func TestInitialJoinDelayAndFirstGeneration(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	a := f.joinNew("range")
	f.wantState(PreparingRebalance)
	f.advance(2 * time.Second)
	b := f.joinNew("range")
	f.advance(time.Second) // the first delay ends; a member arrived: wait again
	if a.done() || b.done() {
		t.Fatal("answered during the initial delay extension")
	}
	f.advance(3 * time.Second)
	f.wantState(CompletingRebalance)
	if a.r.Err != nil || a.r.Generation != 1 || a.r.Leader != a.r.MemberID || len(a.r.Members) != 2 {
		t.Fatalf("leader answer %+v", a.r)
	}
	if b.r.Err != nil || len(b.r.Members) != 0 || b.r.Leader != a.r.MemberID || b.r.Protocol != "range" {
		t.Fatalf("follower answer %+v", b.r)
	}
	// The follower's SyncGroup waits for the leader's; a failed write
	// answers both with the error and rebalances.
	sb := f.sync(b.r.MemberID, 1, nil)
	if sb.SyncResult != nil {
		t.Fatal("follower sync answered before the leader's")
	}
	sa := f.sync(a.r.MemberID, 1, map[string][]byte{b.r.MemberID: []byte("x")})
	f.store(kerr.NotCoordinator)
	if sa.SyncResult == nil || sb.SyncResult == nil || !errors.Is(sa.Err, kerr.NotCoordinator) {
		t.Fatalf("after failed store: %+v %+v", sa, sb)
	}
	f.wantState(PreparingRebalance)
}

func TestStableHeartbeatsAndSessionExpiry(t *testing.T) {
	f, la, lb := stable(t)
	for range 3 {
		f.advance(5 * time.Second)
		if err := f.g.Heartbeat(la, nil, 1, f.now); err != nil && !errors.Is(err, kerr.RebalanceInProgress) {
			t.Fatal(err)
		}
	}
	// lb stopped heartbeating 15 s ago (session 10 s): it was removed and
	// the group is rebalancing; la learns it from its heartbeat.
	if f.g.members[lb] != nil {
		t.Fatal("expired member still in the group")
	}
	f.wantState(PreparingRebalance)
	if err := f.g.Heartbeat(la, nil, 1, f.now); !errors.Is(err, kerr.RebalanceInProgress) {
		t.Fatalf("heartbeat: %v", err)
	}
	a := f.join(req(la))
	if !a.done() || a.r.Generation != 2 || len(a.r.Members) != 1 {
		t.Fatalf("rejoin: %+v", a.r)
	}
	if err := f.g.Heartbeat(la, nil, 1, f.now); !errors.Is(err, kerr.IllegalGeneration) {
		t.Fatalf("old generation heartbeat: %v", err)
	}
	if err := f.g.Heartbeat("nobody", nil, 2, f.now); !errors.Is(err, kerr.UnknownMemberID) {
		t.Fatalf("unknown member: %v", err)
	}
}

func TestMemberNotRejoiningIsDroppedAtRebalanceTimeout(t *testing.T) {
	f, la, lb := stable(t)
	c := f.joinNew()
	f.wantState(PreparingRebalance)
	a := f.join(req(la))
	f.advance(9 * time.Second)
	if f.g.Heartbeat(lb, nil, 1, f.now) == nil {
		t.Fatal("heartbeat during rebalance without error")
	}
	f.advance(time.Second) // rebalance timeout (10 s) reached
	if !a.done() || !c.done() || a.r.Generation != 2 || f.g.members[lb] != nil || f.g.Size() != 2 {
		t.Fatalf("after rebalance timeout: %+v %+v size %d", a.r, c.r, f.g.Size())
	}
}

func TestLeaveAndEmpty(t *testing.T) {
	f, la, lb := stable(t)
	errs := f.g.Leave([]LeaveMember{{MemberID: lb}, {MemberID: "ghost"}}, f.now)
	if errs[0] != nil || !errors.Is(errs[1], kerr.UnknownMemberID) {
		t.Fatalf("leave: %v", errs)
	}
	f.wantState(PreparingRebalance)
	f.g.Leave([]LeaveMember{{MemberID: la}}, f.now)
	f.wantState(Empty) // every member left: the join completes with none
	if f.g.Generation() != 2 || len(f.stores) != 1 {
		t.Fatalf("generation %d, writes %d", f.g.Generation(), len(f.stores))
	}
}

// The last member of a Stable group leaving empties it at once: the
// rebalance it starts has every remaining member (none) joined, so it
// completes there and then, as Kafka's DelayedJoin does when first tried,
// not at the coordinator's next tick. A DescribeGroups right after a
// consumer's close reads Empty.
func TestLastMemberLeavingEmptiesAtOnce(t *testing.T) {
	f, la, lb := stable(t)
	f.g.Leave([]LeaveMember{{MemberID: lb}}, f.now)
	f.wantState(PreparingRebalance) // la has yet to rejoin
	a := f.join(req(la))
	if !a.done() || a.r.Generation != 2 {
		t.Fatalf("rejoin: %+v", a.r)
	}
	f.sync(la, 2, map[string][]byte{la: []byte("A")})
	f.store(nil)
	f.wantState(Stable)
	f.g.Leave([]LeaveMember{{MemberID: la}}, f.now)
	f.wantState(Empty)
	if f.g.Generation() != 3 || len(f.stores) != 1 {
		t.Fatalf("generation %d, writes %d", f.g.Generation(), len(f.stores))
	}
}

func TestJoinErrors(t *testing.T) {
	f, la, lb := stable(t)
	r := req("")
	r.SessionTimeout = time.Second
	if a := f.join(r); !errors.Is(a.r.Err, kerr.InvalidSessionTimeout) {
		t.Fatalf("session timeout: %+v", a.r)
	}
	r = req("", "roundrobin")
	if a := f.join(r); !errors.Is(a.r.Err, kerr.InconsistentGroupProtocol) {
		t.Fatalf("protocols: %+v", a.r)
	}
	r = req("")
	r.ProtocolType = "connect"
	if a := f.join(r); !errors.Is(a.r.Err, kerr.InconsistentGroupProtocol) {
		t.Fatalf("protocol type: %+v", a.r)
	}
	if a := f.join(req("ghost")); !errors.Is(a.r.Err, kerr.UnknownMemberID) {
		t.Fatalf("unknown member: %+v", a.r)
	}
	f.wantState(Stable) // none of that disturbed the group
	f.joinNew()         // a third member: group.max.size is 3
	f.join(req(la))
	f.join(req(lb))
	f.wantState(CompletingRebalance)
	if a := f.join(req("")); !errors.Is(a.r.Err, kerr.GroupMaxSizeReached) {
		t.Fatalf("max size: %+v", a.r)
	}
	if f.g.Size() != 3 || f.g.Generation() != 2 {
		t.Fatalf("size %d generation %d", f.g.Size(), f.g.Generation())
	}
}

func TestProtocolSelection(t *testing.T) {
	f := newFixture(t, time.Second)
	a := f.join(req("", "sticky", "range"))
	b := f.join(req("", "range", "sticky"))
	c := f.join(req("", "range", "sticky", "roundrobin"))
	f.settle()
	for _, x := range []*joinAnswer{a, b, c} {
		if !x.done() || x.r.Protocol != "range" {
			t.Fatalf("selected %+v, want range (2 votes of 3)", x.r)
		}
	}
}

func TestStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	f := newFixture(t, 0)
	inst := "i-1"
	r := req("")
	r.InstanceID = &inst
	a := f.join(r) // no initial delay: the generation starts at once
	old := a.r.MemberID
	f.sync(old, 1, map[string][]byte{old: []byte("A")})
	f.store(nil)
	f.wantState(Stable)
	// The process restarts: same instance id, no member id.
	b := f.join(r)
	f.store(nil) // the new member id is persisted
	f.wantState(Stable)
	if !b.done() || b.r.Err != nil || b.r.Generation != 1 || b.r.MemberID == old {
		t.Fatalf("static rejoin: %+v", b.r)
	}
	if s := f.sync(b.r.MemberID, 1, nil); s.SyncResult == nil || string(s.Assignment) != "A" {
		t.Fatalf("sync after static rejoin: %+v", s)
	}
	if err := f.g.Heartbeat(old, &inst, 1, f.now); !errors.Is(err, kerr.FencedInstanceID) {
		t.Fatalf("old member id: %v", err)
	}
}

func TestCommitValidation(t *testing.T) {
	f, la, _ := stable(t)
	for _, tc := range []struct {
		member string
		gen    int32
		want   error
	}{
		{la, 1, nil},
		{la, 0, kerr.IllegalGeneration},
		{"ghost", 1, kerr.UnknownMemberID},
		{"", -1, kerr.UnknownMemberID}, // outside group management, group not Empty
	} {
		if err := f.g.ValidateCommit(tc.member, nil, tc.gen, f.now); !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("commit %q gen %d: %v, want %v", tc.member, tc.gen, err, tc.want)
		}
	}
	e := newFixture(t, 0)
	if err := e.g.ValidateCommit("", nil, -1, e.now); err != nil {
		t.Fatalf("simple commit to an Empty group: %v", err)
	}
	e.g.ApplyOffset(TP{"t", 0}, Offset{Offset: 5}, 10)
	e.g.ApplyOffset(TP{"t", 0}, Offset{Offset: 3}, 9) // an older write lands later
	if o, _ := e.g.Committed(TP{"t", 0}); o.Offset != 5 {
		t.Fatalf("committed %d, want 5", o.Offset)
	}
}

// KIP-394: a member id handed out with MEMBER_ID_REQUIRED that is never
// used expires after the session timeout, and the rebalance it held back
// completes.
func TestPendingMemberExpires(t *testing.T) {
	f, la, lb := stable(t)
	r := req("")
	r.RequireKnownMember = true
	if a := f.join(r); !errors.Is(a.r.Err, kerr.MemberIDRequired) {
		t.Fatalf("first join: %+v", a.r)
	}
	a, b := f.join(req(la)), f.join(req(lb))
	f.advance(5 * time.Second)
	if a.done() {
		t.Fatal("join completed while a pending member may still join")
	}
	f.advance(5 * time.Second) // its session timeout (10 s)
	if !a.done() || !b.done() || a.r.Generation != 2 || f.g.Size() != 2 {
		t.Fatalf("after the pending member expired: %+v %+v", a.r, b.r)
	}
}

// A member that does not send SyncGroup within the rebalance timeout is
// removed and the group rebalances.
func TestPendingSyncExpires(t *testing.T) {
	f := newFixture(t, time.Second)
	a, b := f.joinNew(), f.joinNew()
	f.settle()
	f.sync(a.r.MemberID, a.r.Generation, map[string][]byte{a.r.MemberID: []byte("A")})
	f.store(nil)
	f.wantState(Stable)
	f.advance(5 * time.Second)
	if err := f.g.Heartbeat(a.r.MemberID, nil, a.r.Generation, f.now); err != nil {
		t.Fatal(err)
	}
	f.advance(5 * time.Second) // the rebalance timeout since the join answers
	if f.g.members[b.r.MemberID] != nil {
		t.Fatal("member that never synced is still in the group")
	}
	f.wantState(PreparingRebalance)
}

// A member rejoining with the same metadata while the group awaits the
// leader's assignment gets the current generation back.
func TestRejoinDuringCompletingRebalance(t *testing.T) {
	f := newFixture(t, time.Second)
	a, b := f.joinNew(), f.joinNew()
	f.settle()
	f.wantState(CompletingRebalance)
	again := f.join(req(b.r.MemberID))
	if !again.done() || again.r.Generation != 1 || again.r.Leader != a.r.MemberID {
		t.Fatalf("rejoin: %+v", again.r)
	}
	f.wantState(CompletingRebalance)
	changed := req(b.r.MemberID, "roundrobin", "range")
	f.join(changed)
	f.wantState(PreparingRebalance) // new metadata: rebalance
}

// An administrator removes a static member by its instance id alone.
func TestLeaveByInstanceID(t *testing.T) {
	f := newFixture(t, 0)
	inst := "i-9"
	r := req("")
	r.InstanceID = &inst
	a := f.join(r)
	if errs := f.g.Leave([]LeaveMember{{InstanceID: &inst}}, f.now); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if f.g.members[a.r.MemberID] != nil || f.g.Size() != 0 {
		t.Fatal("static member still there")
	}
	if errs := f.g.Leave([]LeaveMember{{InstanceID: &inst}}, f.now); !errors.Is(errs[0], kerr.UnknownMemberID) {
		t.Fatalf("second removal: %v", errs[0])
	}
}

// The offsets of a consumer group expire once it has been Empty for the
// retention period, not before.
func TestEmptyGroupOffsetsExpire(t *testing.T) {
	f, la, lb := stable(t)
	f.g.ApplyOffset(TP{"t", 0}, Offset{Offset: 1, CommitTime: f.now}, 1)
	if got := f.g.ExpiredOffsets(f.now.Add(48*time.Hour), time.Hour); len(got) != 0 {
		t.Fatal("offsets of a group with members expired")
	}
	f.g.Leave([]LeaveMember{{MemberID: la}, {MemberID: lb}}, f.now)
	f.wantState(Empty)
	if got := f.g.ExpiredOffsets(f.now.Add(59*time.Minute), time.Hour); len(got) != 0 {
		t.Fatal("expired before the retention period")
	}
	if got := f.g.ExpiredOffsets(f.now.Add(time.Hour), time.Hour); len(got) != 1 {
		t.Fatal("not expired after the retention period")
	}
}

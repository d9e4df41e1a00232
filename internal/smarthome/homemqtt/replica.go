package homemqtt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"partnerapi/internal/smarthome"
)

// Several replicas of serve on one database may each run the gate; one of
// them at a time, the leader, connects to the broker and answers the
// agents, chosen through a lease row in the database
// (smarthome.GateStore), one per topic root. The others watch the lease
// and take it over when its holder stops renewing it, and relay what
// their admin API sends to agents to the leader (relay.go).
//
// A lease row rather than a PostgreSQL advisory lock: a lock held on a
// dedicated connection tells its holder nothing when that connection
// hangs (a partition between the replica and the database keeps the
// session alive on the server until TCP keepalives end it, minutes, while
// the holder cannot know whether it still holds the lock), SQLite has no
// such lock, and the lease gives the holder a deadline it computes itself.
//
// No clock of another machine is trusted. The holder bumps the row's
// counter (beat) every Lease/5 and counts itself the leader until 2/3 of
// Lease after it began its last successful renewal, on its own monotonic
// clock; a contender takes the lease only once it has watched the counter
// stand still for a whole Lease on its own monotonic clock. The contender
// first saw the last counter after the holder's renewal committed, which
// was after the holder began it, so the holder has fallen silent a third
// of Lease before the contender may take over, whatever the two machines'
// wall clocks say, as long as their clocks run at nearly the same rate.
// A holder that cannot reach the database (its connection dropped, a
// partition) falls silent when its deadline passes, with no round trip;
// one frozen (SIGSTOP) or killed stops renewing, and a frozen one that is
// thawed finds its deadline passed before it reads or publishes anything
// more (Gate leads). What a frozen leader had already handed to the MQTT
// client before the freeze (a publication under way, at most one per
// goroutine that passed the check) may still leave it when it is
// thawed: those are the stale duplicates left, as the README says.

// DefaultLease is how long a leader's lease lasts unrenewed: a leader that
// dies is replaced within about Lease and a fifth (the contenders look
// every Lease/5), and one that cannot reach the database falls silent
// after 2/3 of it.
const DefaultLease = 15 * time.Second

// ReplicaConfig is how a replica runs its gate.
type ReplicaConfig struct {
	Gate  Config
	Store smarthome.GateStore
	// Lease is the lease's length (DefaultLease when 0).
	Lease time.Duration
	// Exclusive says no other process serves on this database (SQLite,
	// whose data directory one serve holds locked): a lease another
	// holder left is then a dead process's and is taken at once, so a
	// restart after a crash waits for nothing.
	Exclusive bool
	// ID names this replica in the lease and the logs (a fresh one per
	// process when empty).
	ID string
}

// Replica is a replica's side of the gate: the leader's gate while it
// leads, and the admin API's way to agents either way (Command, Send).
type Replica struct {
	cfg   ReplicaConfig
	cat   Catalogs
	log   *slog.Logger
	m     *Metrics
	tick  time.Duration
	valid time.Duration

	// validUntil is when this replica stops counting itself the leader
	// (nil: it does not lead); it keeps time.Now's monotonic reading.
	validUntil atomic.Pointer[time.Time]
	// gate is the leader's connected gate, nil on the others.
	gate atomic.Pointer[Gate]

	done, stopped chan struct{}
	closeOnce     sync.Once
	// remembered counts the agents this replica recorded as heard; every
	// maxResumed of them the list is cut back (remember).
	remembered atomic.Int64
}

// term is one stretch of leadership: the goroutine that runs the gate
// (lead) ends when cancel is called and closes ended; failed is closed
// when the gate could not start.
type term struct {
	cancel context.CancelFunc
	ended  chan struct{}
	failed chan struct{}
}

// StartReplica starts watching the lease of cfg.Gate.Root; the replica
// takes it at its first look when nobody holds it. Close stops it.
func StartReplica(cfg ReplicaConfig, cat Catalogs) (*Replica, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("homemqtt: a replica needs the store its replicas share")
	}
	if cfg.Gate.Root == "" {
		cfg.Gate.Root = DefaultRoot
	}
	if cfg.Gate.Log == nil {
		cfg.Gate.Log = slog.Default()
	}
	if cfg.Gate.Metrics == nil {
		cfg.Gate.Metrics = NewMetrics(nil)
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		cfg.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	r := &Replica{cfg: cfg, cat: cat, log: cfg.Gate.Log, m: cfg.Gate.Metrics,
		tick: cfg.Lease / 5, valid: cfg.Lease * 2 / 3,
		done: make(chan struct{}), stopped: make(chan struct{})}
	r.m.leader.Set(0)
	go r.run()
	return r, nil
}

// ID is the replica's name in the lease.
func (r *Replica) ID() string { return r.cfg.ID }

// Leading reports whether this replica leads: it holds the lease and its
// deadline has not passed.
func (r *Replica) Leading() bool {
	until := r.validUntil.Load()
	return until != nil && time.Now().Before(*until)
}

// Gate is the leader's gate, nil while this replica does not lead or its
// gate is still connecting.
func (r *Replica) Gate() *Gate { return r.gate.Load() }

// Close gives the leadership up, if this replica has it, once its gate is
// closed (the next leader then takes over at its next look, within
// Lease/5), and stops watching the lease.
func (r *Replica) Close() {
	// Once, because two goroutines closing at the same time would both
	// find done open and close it twice.
	r.closeOnce.Do(func() { close(r.done) })
	<-r.stopped
}

// run watches the lease until Close.
func (r *Replica) run() {
	defer close(r.stopped)
	var cur *term
	var seen smarthome.GateLease
	var seenAt, pauseUntil time.Time
	t := time.NewTicker(r.tick)
	defer t.Stop()
	for {
		if cur != nil {
			cur = r.keep(cur, &pauseUntil)
		} else if time.Now().After(pauseUntil) {
			cur = r.contend(&seen, &seenAt)
		}
		select {
		case <-r.done:
			if cur != nil {
				r.stepDown(cur, "the replica is stopping")
				r.release()
			}
			return
		case <-t.C:
		}
	}
}

// keep renews the lease of the term under way; it returns nil once the
// replica no longer leads.
func (r *Replica) keep(cur *term, pauseUntil *time.Time) *term {
	select {
	case <-cur.failed:
		r.stepDown(cur, "its gate could not connect to the broker")
		r.release()
		// Another replica may reach the broker: leave it the lease for a
		// while before contending again.
		*pauseUntil = time.Now().Add(r.cfg.Lease)
		return nil
	default:
	}
	began := time.Now()
	ok, err := r.bounded(func(ctx context.Context) (bool, error) {
		return r.cfg.Store.RenewGateLease(ctx, r.cfg.Gate.Root, r.cfg.ID)
	})
	switch {
	case err == nil && ok:
		until := began.Add(r.valid)
		r.validUntil.Store(&until)
		return cur
	case err == nil:
		r.stepDown(cur, "another replica took the lease")
		return nil
	case !r.Leading():
		r.stepDown(cur, "the lease could not be renewed before its deadline: "+err.Error())
		return nil
	default:
		r.log.Warn("smarthome mqtt: the MQTT gate's lease could not be renewed; this replica leads until its deadline",
			"replica", r.cfg.ID, "err", err, "deadline_in", time.Until(*r.validUntil.Load()).Round(time.Millisecond).String())
		return cur
	}
}

// contend reads the lease and takes it when nobody holds it, or when its
// counter has stood still for a whole Lease since this replica first saw
// it (its holder stopped renewing), or at once with Exclusive.
func (r *Replica) contend(seen *smarthome.GateLease, seenAt *time.Time) *term {
	var l smarthome.GateLease
	_, err := r.bounded(func(ctx context.Context) (_ bool, err error) {
		l, err = r.cfg.Store.GateLease(ctx, r.cfg.Gate.Root)
		return false, err
	})
	if err != nil {
		r.log.Debug("smarthome mqtt: the MQTT gate's lease cannot be read", "err", err)
		return nil
	}
	now := time.Now()
	if l != *seen || seenAt.IsZero() {
		*seen, *seenAt = l, now
	}
	free := l.Holder == "" || l.Holder == r.cfg.ID || r.cfg.Exclusive || now.Sub(*seenAt) >= r.cfg.Lease
	if !free {
		return nil
	}
	began := time.Now()
	ok, err := r.bounded(func(ctx context.Context) (bool, error) {
		return r.cfg.Store.TakeGateLease(ctx, r.cfg.Gate.Root, r.cfg.ID, l)
	})
	if err != nil || !ok {
		return nil // another replica was faster, or the database is away
	}
	until := began.Add(r.valid)
	r.validUntil.Store(&until)
	r.m.leader.Set(1)
	if l.Holder == "" || l.Holder == r.cfg.ID {
		r.log.Info("smarthome mqtt: this replica leads the MQTT gate", "replica", r.cfg.ID, "root", r.cfg.Gate.Root)
	} else {
		r.log.Info("smarthome mqtt: this replica leads the MQTT gate, taken over from a holder that stopped renewing its lease",
			"replica", r.cfg.ID, "root", r.cfg.Gate.Root, "previous", l.Holder)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cur := &term{cancel: cancel, ended: make(chan struct{}), failed: make(chan struct{})}
	go r.lead(ctx, cur)
	return cur
}

// stepDown ends a term: the gate falls silent at once (Leading is false
// from here on), then closes.
func (r *Replica) stepDown(cur *term, why string) {
	r.validUntil.Store(nil)
	r.m.leader.Set(0)
	r.log.Warn("smarthome mqtt: this replica no longer leads the MQTT gate", "replica", r.cfg.ID, "root", r.cfg.Gate.Root, "reason", why)
	cur.cancel()
	<-cur.ended
}

// release gives the lease up so that another replica takes it at its
// next look instead of after a whole Lease.
func (r *Replica) release() {
	_, err := r.bounded(func(ctx context.Context) (bool, error) {
		return false, r.cfg.Store.ReleaseGateLease(ctx, r.cfg.Gate.Root, r.cfg.ID)
	})
	if err != nil {
		r.log.Warn("smarthome mqtt: the MQTT gate's lease could not be given up; another replica takes it when it lapses",
			"replica", r.cfg.ID, "err", err, "lease", r.cfg.Lease.String())
	}
}

// bounded runs one statement of the lease within a tick, so that a
// database that does not answer cannot hold the renewals past the
// deadline unnoticed.
func (r *Replica) bounded(f func(ctx context.Context) (bool, error)) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.tick)
	defer cancel()
	return f(ctx)
}

// lead runs the gate for a term: connects it, asks the agents the earlier
// leaders heard for their configs, serves relayed messages, and closes the
// gate when the term ends.
func (r *Replica) lead(ctx context.Context, cur *term) {
	defer close(cur.ended)
	cfg := r.cfg.Gate
	cfg.leading = r.Leading
	cfg.heard = r.remember
	names := r.heardBefore()
	g, err := StartContext(ctx, cfg, r.cat)
	if err != nil && ctx.Err() != nil {
		return // the term ended while the gate connected
	}
	if err != nil {
		r.log.Error("smarthome mqtt: the MQTT gate could not connect as leader; giving the lease up", "replica", r.cfg.ID, "err", err)
		close(cur.failed)
		return
	}
	r.gate.Store(g)
	defer func() {
		r.gate.Store(nil)
		g.Close()
	}()
	r.resume(ctx, g, names)
	r.serveRelay(ctx, g)
}

// maxResumed bounds how many agents a new leader asks for their configs.
const maxResumed = 1000

// heardBefore reads the agents earlier leaders heard, before this term's
// gate hears any: those it hears itself need no asking.
func (r *Replica) heardBefore() []string {
	var names []string
	ctx, cancel := context.WithTimeout(context.Background(), catalogTimeout)
	defer cancel()
	names, err := r.cfg.Store.GateAgents(ctx, r.cfg.Gate.Root, maxResumed)
	if err != nil {
		r.log.Warn("smarthome mqtt: the agents earlier leaders heard cannot be read; they are asked for their configs at their next status", "err", err)
	}
	return names
}

// resume rebuilds what the previous leader knew: what the gate keeps of
// an agent is what its configs said (its devices, which commands and the
// app's changes are checked against, and the models it gave them), and a
// new gate has none of it. It asks the agents its predecessors heard
// (names) for their whole configs, as a reconnecting gate does (resync),
// once its subscription is in place so that no answer is missed; the
// answers replace each agent's devices. An agent the gate has heard from
// meanwhile is not asked (a status before any config asks by itself), one
// that does not answer is asked once more (configrequest.go), and one
// that is away answers its next status's request instead.
func (r *Replica) resume(ctx context.Context, g *Gate, names []string) {
	for !g.Connected() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	asked := 0
	for _, name := range names {
		if g.cfg.Agents != nil {
			if known, _ := g.cfg.Agents.AgentLastRegistered(name); !known {
				continue
			}
		}
		g.mu.Lock()
		_, heard := g.agents[name]
		g.mu.Unlock()
		if heard {
			continue
		}
		g.askConfig(g.client, name, g.agent(name), false)
		asked++
	}
	if asked > 0 {
		r.log.Info("smarthome mqtt: asked the agents earlier leaders heard for their configs", "agents", asked)
	}
}

// remember records, for the next leader, an agent the gate heard.
//
// A next leader reads only the maxResumed most recently heard, so after
// every maxResumed agents recorded the others are deleted: with
// --smarthome-mqtt-registered-agents=false any name published under the
// root is heard, and the list would otherwise keep one row for every name
// ever published there.
func (r *Replica) remember(name string) {
	_, err := r.bounded(func(ctx context.Context) (bool, error) {
		return false, r.cfg.Store.RememberGateAgent(ctx, r.cfg.Gate.Root, name, time.Now())
	})
	if err != nil {
		r.log.Debug("smarthome mqtt: an agent heard could not be recorded for the next leader", "agent", loggedName(name), "err", err)
		return
	}
	if r.remembered.Add(1)%maxResumed != 0 {
		return
	}
	if _, err := r.bounded(func(ctx context.Context) (bool, error) {
		return false, r.cfg.Store.ForgetGateAgents(ctx, r.cfg.Gate.Root, maxResumed)
	}); err != nil {
		r.log.Debug("smarthome mqtt: the agents heard could not be cut back to the most recent; the next thousand try again", "err", err)
	}
}

// recordHeard tells Config heard of an agent the first time the gate
// serves it.
func (g *Gate) recordHeard(name string) {
	if g.cfg.heard == nil {
		return
	}
	g.mu.Lock()
	first := !g.heardNames[name]
	g.heardNames[name] = true
	g.mu.Unlock()
	if first {
		g.spawn(func() { g.cfg.heard(name) })
	}
}

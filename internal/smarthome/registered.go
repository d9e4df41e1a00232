package smarthome

import (
	"context"
	"time"
)

// agentSet is the logins of every agent credential as of one value of the
// store's credentials counter.
type agentSet struct {
	logins      map[string]struct{}
	credentials int64         // Stamp.Credentials it belongs to
	read        time.Duration // when it was read, on the Service clock
}

// AgentRegistered reports whether login has an agent credential (made by
// CreateCredential with KindAgent and not deleted since). It answers from
// a set of every agent login, read from the store once and again only
// when the credentials counter moves (a credential created, replaced or
// deleted by this or any other process, seen within twice DefaultRecheck)
// or VerifiedTTL after the last read (a row edited by hand): the MQTT gate
// asks it for every message an agent publishes, and names it has never
// seen, which anyone on the broker can make up, must cost no query each.
// An error means the store could not be read.
func (s *Service) AgentRegistered(ctx context.Context, login string) (bool, error) {
	if !ValidLogin(login) {
		return false, nil
	}
	set, err := s.agentSet(ctx)
	if err != nil {
		return false, err
	}
	_, ok := set.logins[login]
	return ok, nil
}

// ReadAgents reads the set of agent logins that AgentRegistered and
// AgentLastRegistered answer from, unless the one read is current. The
// MQTT gate calls it when it starts, so that a set exists before the first
// agent's message, even if the store fails before one comes.
func (s *Service) ReadAgents(ctx context.Context) error {
	_, err := s.agentSet(ctx)
	return err
}

// agentSet returns the current set of agent logins, read from the store
// when the one read is not current (see AgentRegistered).
func (s *Service) agentSet(ctx context.Context) (*agentSet, error) {
	snap, now, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	set := s.agents.Load()
	if set.current(snap.stamp.Credentials, now) {
		return set, nil
	}
	s.agentsLoad.Lock()
	defer s.agentsLoad.Unlock()
	if set = s.agents.Load(); set.current(snap.stamp.Credentials, now) {
		return set, nil
	}
	logins, err := s.store.Logins(ctx, KindAgent)
	if err != nil {
		return nil, err
	}
	set = &agentSet{logins: make(map[string]struct{}, len(logins)), credentials: snap.stamp.Credentials, read: now}
	for _, l := range logins {
		set.logins[l] = struct{}{}
	}
	s.agents.Store(set)
	return set, nil
}

// current reports whether the set may answer for the credentials counter
// cred at time now. The logins were read after the counter was, so they
// are at least as new as it.
func (a *agentSet) current(cred int64, now time.Duration) bool {
	return a != nil && a.credentials == cred && now-a.read < VerifiedTTL
}

// AgentLastRegistered answers from the last set of agent logins that
// AgentRegistered read, however old, and never asks the store: registered
// tells whether login was in it, read whether any set was ever read. The
// MQTT gate asks it while the store cannot be read, so that messages under
// names that were not registered then, which anyone on the broker can make
// up, are not held beside (and do not push out) the registered agents'.
func (s *Service) AgentLastRegistered(login string) (registered, read bool) {
	set := s.agents.Load()
	if set == nil {
		return false, false
	}
	_, ok := set.logins[login]
	return ok, true
}

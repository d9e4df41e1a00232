package smarthome

import (
	"encoding/json"
	"slices"
	"time"
)

// Which up/config answers what the gate asked (see Agent Config for the
// rule): the config requests outstanding, whose answer is the agent's
// whole list and replaces its devices, and the renames and moves the gate
// sent, whose answer is a config of that device and merges.

// FullConfigWait is how long after the first of the down/config_requests
// outstanding together the agent's next up/config is taken for their
// answer. An agent answers at once; one that never answers must not leave
// the gate reading a later config of one device as the whole list, so
// after this the gate merges again. A request sent while one is
// outstanding (the gate's one re-ask, half this after the first, or an
// administrator's) joins that window and does not push its end out: a
// config that comes more than FullConfigWait after the first request
// merges, however many followed it.
const FullConfigWait = 10 * time.Second

// answerWindow is the time in which the agent's next up/config is read as
// the answer to the config requests outstanding together.
type answerWindow struct {
	by time.Time
	// reqs are the requests in it not withdrawn, oldest first.
	reqs []*ConfigRequest
}

// ConfigRequested records that a down/config_request is about to be sent
// to the agent, so that its next up/config within FullConfigWait is read
// as the whole list of its devices and replaces them (see Config); call it
// before sending, so that no answer can come before it. The function it
// returns withdraws the request when it could not be sent.
func (a *Agent) ConfigRequested() (withdraw func()) {
	return a.RequestConfig().Withdraw
}

// ConfigRequest is one down/config_request recorded by RequestConfig.
type ConfigRequest struct {
	a *Agent
	w *answerWindow
}

// RequestConfig records a down/config_request as ConfigRequested does and
// returns it, so that the sender can withdraw it and later ask whether the
// agent answered it. A request while another is outstanding joins its
// window (FullConfigWait); one after it ended opens a new one.
func (a *Agent) RequestConfig() *ConfigRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock()
	w := a.window
	if w == nil || !now.Before(w.by) {
		w = &answerWindow{by: now.Add(FullConfigWait)}
		a.window = w
	}
	r := &ConfigRequest{a: a, w: w}
	w.reqs = append(w.reqs, r)
	return r
}

// Withdraw drops a request that could not be sent: the window it joined
// stays open for the other requests in it that were, and ends with the
// last of them.
func (r *ConfigRequest) Withdraw() {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	i := slices.Index(r.w.reqs, r)
	if i < 0 {
		return
	}
	r.w.reqs = slices.Delete(r.w.reqs, i, i+1)
	if len(r.w.reqs) == 0 && r.a.window == r.w {
		r.a.window = nil
	}
}

// Unanswered reports whether no config has come since the request, no
// later request opened a new window and none joined this one after it:
// the agent, which answers at once, most likely missed it (it was
// reconnecting to the broker when it went out), and whoever sent the
// latest request of the window may ask once more, the one re-ask of
// several requests outstanding together. A config that answers a rename
// or a move leaves the request unanswered.
func (r *ConfigRequest) Unanswered() bool {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	w := r.a.window
	return w == r.w && len(w.reqs) > 0 && w.reqs[len(w.reqs)-1] == r
}

// expectedChange is a rename or a move the gate sent for a device: until
// when its answer is expected, and what the device's config carries once
// the agent applied it (the new name, or the new home and room).
type expectedChange struct {
	by               time.Time
	rename           bool
	name, home, room string
}

// appliedIn reports whether the device's config carries the change.
func (e *expectedChange) appliedIn(d placement) bool {
	if e.rename {
		return d.Name == e.name
	}
	return d.Home == e.home && d.Room == e.room
}

// placement is what a device's config says of its name and place.
type placement struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Home string `json:"home"`
	Room string `json:"room"`
}

// RenameRequested records that a down/rename_device_request is about to
// be sent to the agent, so that its config of that device under the new
// name within FullConfigWait is not taken for the answer to a config
// request (see Config); call it before sending. The function it returns
// withdraws the expectation when the request could not be sent.
func (a *Agent) RenameRequested(r RenameRequest) (withdraw func()) {
	return a.expectChange(r.DeviceID, &expectedChange{rename: true, name: r.NewName})
}

// MoveRequested is RenameRequested for a
// down/change_group_device_request: the answer carries the new home and
// room.
func (a *Agent) MoveRequested(g GroupRequest) (withdraw func()) {
	return a.expectChange(g.DeviceID, &expectedChange{home: g.Home, room: g.Room})
}

func (a *Agent) expectChange(id string, e *expectedChange) (withdraw func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e.by = a.clock().Add(FullConfigWait)
	if a.changed == nil {
		a.changed = map[string][]*expectedChange{}
	}
	a.changed[id] = append(a.changed[id], e)
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.dropChangeLocked(id, e)
	}
}

// dropChangeLocked forgets one expected change; a.mu is held.
func (a *Agent) dropChangeLocked(id string, e *expectedChange) {
	left := slices.DeleteFunc(a.changed[id], func(x *expectedChange) bool { return x == e })
	if len(left) == 0 {
		delete(a.changed, id)
	} else {
		a.changed[id] = left
	}
}

func (a *Agent) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// hubCategory is the category of a hub (reference §6.1), whose children
// name it by parent_id (§7).
const hubCategory = "hub"

// takeAnswer reports whether the config msg, whose devices devs (with
// their effective models, aligned) it carries, arriving now answers the
// outstanding config requests (see Config for the rule). A config that
// answers renames or moves settles those and leaves the config requests
// outstanding; any other config ends their window, answer or not.
func (a *Agent) takeAnswer(msg []byte, devs []DeviceReport, models []*Model) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock()
	for id, es := range a.changed {
		if live := slices.DeleteFunc(es, func(e *expectedChange) bool { return !now.Before(e.by) }); len(live) > 0 {
			a.changed[id] = live
		} else {
			delete(a.changed, id)
		}
	}
	if len(a.changed) > 0 {
		if places := placementsOf(msg, len(devs)); places != nil && a.answersChangeLocked(places, models) {
			return false
		}
	}
	answer := a.window != nil && now.Before(a.window.by)
	a.window = nil
	return answer
}

// placementsOf reads the name and place of each device of a config that
// checkConfig read (so it parses), aligned with its devices; nil if it
// does not.
func placementsOf(msg []byte, n int) []placement {
	devs, err := devicesOf(msg)
	if err != nil {
		return nil
	}
	var out []placement
	if json.Unmarshal(devs, &out) != nil || len(out) != n {
		return nil
	}
	return out
}

// answersChangeLocked reports whether a config answers renames or moves
// the gate sent, and if so settles them: beside hubs only (MQTT-SberGate
// puts its hub in every config it sends), it carries devices the gate
// sent a rename or a move for, each with the new name or the new home and
// room of one of them. A device the gate renamed that comes under another
// name (an agent that does not answer renames, sending its whole list) is
// no such answer. a.mu is held.
func (a *Agent) answersChangeLocked(places []placement, models []*Model) bool {
	var settled []*expectedChange
	var ids []string
	for i, d := range places {
		found := false
		for _, e := range a.changed[d.ID] {
			if e.appliedIn(d) {
				settled, ids, found = append(settled, e), append(ids, d.ID), true
			}
		}
		if !found && (models[i] == nil || models[i].Category != hubCategory) {
			return false
		}
	}
	for i, e := range settled {
		a.dropChangeLocked(ids[i], e)
	}
	return len(settled) > 0
}

package smarthome

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
)

// ErrGateOff is the answer to a command for an agent when serve runs no
// MQTT gate (its --smarthome-mqtt is empty).
var ErrGateOff = errors.New("the MQTT gate is off: serve with --smarthome-mqtt to send commands to agents")

// Commander sends the cloud's commands to an agent (its down/commands) and
// returns the topic it published on; the MQTT gate is one.
type Commander interface {
	Command(ctx context.Context, agent string, msg []byte) (topic string, err error)
}

// Agent is what the cloud side of the MQTT protocol (reference §7) knows of
// one agent between its messages: the category of each device of its last
// up/config. An up/status message names devices by id only, so its values
// are checked against the features of the category the agent configured
// each device with; a device it never configured is checked against the
// whole catalog. An Agent is safe for concurrent use.
type Agent struct {
	mu         sync.Mutex
	categories map[string]string // device id → category
	// configured: a config was read; asked: a config was asked for since.
	configured, asked bool
}

// AskConfig reports, once until a config arrives, that the agent's config
// should be asked for (down/config_request): its status came before any
// config, as after the cloud's side restarted while the agent ran on,
// and its devices' categories are unknown until the agent sends one.
func (a *Agent) AskConfig() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.configured || a.asked {
		return false
	}
	a.asked = true
	return true
}

// Config validates an up/config message ({"devices": [...]}) and, when it
// parses, makes its devices the agent's configuration: devices of an
// earlier config that this one leaves out are forgotten, as the cloud
// forgets devices an agent stops announcing.
func (a *Agent) Config(c *Catalog, msg []byte) (*Report, error) {
	rep, err := c.Validate(msg, "")
	if err != nil {
		return nil, err
	}
	if rep.Kind != "config" {
		return nil, &InvalidError{Details: []string{"up/config carries a list of devices"}}
	}
	cats := make(map[string]string, len(rep.Devices))
	for _, d := range rep.Devices {
		if d.ID != "" && c.Categories[d.Category] != nil {
			cats[d.ID] = d.Category
		}
	}
	a.mu.Lock()
	a.categories, a.configured, a.asked = cats, true, false
	a.mu.Unlock()
	return rep, nil
}

// Devices lists the ids of the devices of the agent's last config whose
// category the catalog has, in order.
func (a *Agent) Devices() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.categories))
	for id := range a.categories {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Status validates an up/status message ({"devices": {"<id>": {"states":
// [...]}}}) device by device, each against its configured category.
func (a *Agent) Status(c *Catalog, msg []byte) (*Report, error) {
	a.mu.Lock()
	cats := a.categories // replaced by Config, never changed
	a.mu.Unlock()
	rep, err := c.validate(msg, func(id string) string { return cats[id] })
	if err != nil {
		return nil, err
	}
	if rep.Kind != "status" {
		return nil, &InvalidError{Details: []string{"up/status carries an object of devices by id"}}
	}
	return rep, nil
}

// Command checks a down/commands message for the agent, which has the shape
// of an up/status message ({"devices": {"<id>": {"states": [...]}}}), and
// returns the message to publish. A command that names no device, a device
// without states or a device the agent's last config did not announce is
// refused, and so is one whose states would not pass as the device's
// status: an InvalidError lists every finding, one line each, so that
// nothing the agent's devices cannot take is sent. What is sent is rebuilt
// from the parsed values in the canonical encoding (integers as strings,
// reference §4 and #10) with only the fields the protocol defines, so the
// agent receives what the provider's cloud would send, whatever spelling
// the administrator used.
func (a *Agent) Command(c *Catalog, msg []byte) ([]byte, error) {
	devs, err := devicesOf(msg)
	if err != nil {
		return nil, err
	}
	if devs[0] != '{' {
		return nil, &InvalidError{Details: []string{"down/commands carries an object of devices by id"}}
	}
	m, err := parseStates(devs)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, &InvalidError{Details: []string{"a command names at least one device"}}
	}
	a.mu.Lock()
	cats := a.categories // replaced by Config, never changed
	a.mu.Unlock()
	var details []string
	for _, id := range sortedKeys(m) {
		cat, known := cats[id]
		switch {
		case !known:
			details = append(details, "device '"+id+"' is not a device of the agent's last config")
		case len(m[id].States) == 0:
			details = append(details, "device '"+id+"': a command sets at least one state")
		default:
			r := newDeviceReport(id)
			r.Category = cat
			c.checkStates(&r, m[id].States)
			details = append(details, r.Findings()...)
		}
	}
	if len(details) > 0 {
		return nil, &InvalidError{Details: details}
	}
	return json.Marshal(struct {
		Devices map[string]deviceStates `json:"devices"`
	}{m})
}

// Findings lists what keeps the device from being valid, one line each,
// naming the device (warnings do not count).
func (r *DeviceReport) Findings() []string {
	var out []string
	for _, p := range append(append([]string{}, r.Errors...), r.featureProblems()...) {
		out = append(out, "device '"+r.ID+"': "+p)
	}
	return out
}

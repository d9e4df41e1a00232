package smarthome

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// ErrGateOff is the answer to a command for an agent when serve runs no
// MQTT gate (its --smarthome-mqtt is empty): for good, a feature this
// deployment does not offer, however often the command is sent again.
var ErrGateOff = errors.New("the MQTT gate is off: serve with --smarthome-mqtt to send commands to agents")

// ErrGateDown is what an error of a gate that runs but cannot hand a
// command to its broker for the moment (disconnected and reconnecting, or
// the broker did not acknowledge in time) wraps: the same command succeeds
// once the broker is back. Such an error may also tell how long to wait
// before trying again with a method RetryAfter() time.Duration.
var ErrGateDown = errors.New("the MQTT broker is unreachable")

// Commander sends the cloud's commands to an agent (its down/commands) and
// returns the topic it published on; the MQTT gate is one. Send does the
// same for the cloud's other messages that a user's action in the app
// triggers: kind is RenameKind, GroupKind or ErrorsKind.
type Commander interface {
	Command(ctx context.Context, agent string, msg []byte) (topic string, err error)
	Send(ctx context.Context, agent, kind string, msg []byte) (topic string, err error)
}

// Agent is what the cloud side of the MQTT protocol (reference §7) knows of
// one agent between its messages: the devices its up/config messages
// announced, each with its effective model (inline, or the catalog's by
// model_id, as it was when the config came). An up/status message names
// devices by id only, so its values are checked against the model the
// agent configured each device with: the model's features and
// allowed_values, within its category; a device it never configured is
// checked against the whole catalog. An Agent is safe for concurrent use.
type Agent struct {
	mu sync.Mutex
	// models: device id → effective model, for the announced devices
	// whose model is of a category the catalog has; announced: every
	// device id the agent's configs announced.
	models    map[string]*Model
	announced map[string]bool
	// latest: the devices of the latest config message that have a model
	// of the catalog's categories, in order.
	latest []string
	// configured: a config was read; asked: a config was asked for since.
	configured, asked bool
	// answerBy: until when the next up/config is read as the answer to a
	// down/config_request the gate sent (ConfigRequested), the agent's
	// whole list; zero when no request is outstanding.
	answerBy time.Time
	// changed: the devices the gate asked the agent to rename or move
	// (DeviceChangeRequested), each until when the agent's config of it
	// is expected as the answer; expired ones are dropped by the next
	// config.
	changed map[string]time.Time
	// now is the clock (time.Now unless a test sets it).
	now func() time.Time
}

// FullConfigWait is how long after a down/config_request the agent's next
// up/config is taken for its answer. An agent answers at once; one that
// never answers must not leave the gate reading a later config of one
// device as the whole list, so after this the gate merges again.
const FullConfigWait = 10 * time.Second

// ConfigRequested records that a down/config_request is about to be sent
// to the agent, so that its next up/config within FullConfigWait is read
// as the whole list of its devices and replaces them (see Config); call it
// before sending, so that no answer can come before it. The function it
// returns withdraws the expectation when the request could not be sent,
// unless a later request has renewed it meanwhile.
func (a *Agent) ConfigRequested() (withdraw func()) {
	return a.RequestConfig().Withdraw
}

// ConfigRequest is one down/config_request recorded by RequestConfig.
type ConfigRequest struct {
	a  *Agent
	by time.Time
}

// RequestConfig records a down/config_request as ConfigRequested does and
// returns it, so that the sender can withdraw it and later ask whether the
// agent answered it.
func (a *Agent) RequestConfig() *ConfigRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := &ConfigRequest{a: a, by: a.clock().Add(FullConfigWait)}
	a.answerBy = r.by
	return r
}

// Withdraw drops the expectation of an answer to a request that could not
// be sent, unless a later request has renewed it meanwhile.
func (r *ConfigRequest) Withdraw() {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	if r.a.answerBy.Equal(r.by) {
		r.a.answerBy = time.Time{}
	}
}

// Unanswered reports whether no config has come since the request and no
// later request has renewed it: the agent, which answers at once, most
// likely missed it (it was reconnecting to the broker when it went out),
// and whoever sent it may ask once more. A config that answers a rename or
// a move leaves the request unanswered.
func (r *ConfigRequest) Unanswered() bool {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	return r.a.answerBy.Equal(r.by)
}

// DeviceChangeRequested records that a down/rename_device_request or
// down/change_group_device_request for the device is about to be sent to
// the agent, so that the config of that device it answers with within
// FullConfigWait is not taken for the answer to a config request (see
// Config); call it before sending. The function it returns withdraws the
// expectation when the request could not be sent, unless a later request
// for the device has renewed it meanwhile.
func (a *Agent) DeviceChangeRequested(id string) (withdraw func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	by := a.clock().Add(FullConfigWait)
	if a.changed == nil {
		a.changed = map[string]time.Time{}
	}
	a.changed[id] = by
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.changed[id].Equal(by) {
			delete(a.changed, id)
		}
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

// takeAnswer reports whether a config of the devices devs (with their
// effective models, aligned) that arrives now answers an outstanding
// down/config_request (see Config for the rule). A config that answers a
// rename or a move settles those requests and leaves the config request
// outstanding; any other config ends its expectation, answer or not.
func (a *Agent) takeAnswer(devs []DeviceReport, models []*Model) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock()
	for id, by := range a.changed {
		if !now.Before(by) {
			delete(a.changed, id)
		}
	}
	if a.answersChange(devs, models) {
		for _, d := range devs {
			delete(a.changed, d.ID)
		}
		return false
	}
	answer := !a.answerBy.IsZero() && now.Before(a.answerBy)
	a.answerBy = time.Time{}
	return answer
}

// answersChange reports whether a config answers renames or moves the
// gate sent: it carries a device one of them named and, beside such
// devices, hubs only (MQTT-SberGate puts its hub in every config it
// sends); a.mu is held.
func (a *Agent) answersChange(devs []DeviceReport, models []*Model) bool {
	changed := false
	for i, d := range devs {
		_, asked := a.changed[d.ID]
		switch {
		case asked:
			changed = true
		case models[i] != nil && models[i].Category == hubCategory:
		default:
			return false
		}
	}
	return changed
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
// parses, applies it to the agent's configuration. The answer to the
// gate's own down/config_request (ConfigRequested) is the agent's whole
// list and replaces its devices: a device it leaves out is forgotten, its
// statuses judged as a device's never announced and commands to it
// refused. Any other config is merged: each device it carries replaces the
// one of that id (or is added), and the devices it leaves out are kept. Of
// two devices with one id in one message the first counts (the second is
// a finding).
//
// A merge, because the protocol lets an agent send only what changed. The
// reference gives up/config as a list of devices (§7) and names the
// provider's page for it ([P]), which describes the list as the devices
// "the configuration of which is transmitted" when "the user changes a
// characteristic of one or more devices", and whose example is an
// up/config of the one lamp that was updated. Agents do so: the community
// agent the reference cites ([C], MQTT-SberGate) answers a rename or a
// move (down/rename_device_request, down/change_group_device_request) with
// an up/config of that one device. Read as the whole list, such a message
// would make the gate forget every other device of the agent.
//
// A replacement for the answer to down/config_request, because that
// request asks for the configuration (§7: "{} → reply on up/config"),
// and it is the one way a device taken off a controller leaves the gate:
// the protocol has no message that removes one. MQTT carries no request
// id, and the answer cannot be told by its size (it lists fewer devices
// than the agent had when one was taken off) nor by ids it knows (every
// device of it may be known), so the rule is the order of messages: the
// answer is the first config the agent sends after the request, within
// FullConfigWait, that does not answer a rename or a move the gate sent
// (DeviceChangeRequested). The gate is the agent's only cloud, so every
// rename and move the agent answers with a config of that one device came
// from it: such a config carries a device the gate asked to rename or
// move and, beside it, hubs only (MQTT-SberGate sends its hub, "root",
// with every config; the answer to the request carries every device, the
// hub included). A config of that shape, within FullConfigWait of the
// rename or move, merges and leaves the config request outstanding,
// whether it comes before the answer or after it; a whole list that is
// nothing but the renamed device and hubs is the same devices either way.
// The rules for the races that remain are simple:
//
//   - a config of one device the agent sent on its own (not answering the
//     gate) before the request reached it is taken for the answer, and
//     the real answer, right behind it, is merged: as it lists every
//     device, the gate ends knowing exactly the agent's devices, having
//     missed the others between the two messages only;
//   - several requests outstanding make one expectation, renewed by each:
//     the first config replaces, the agent's further answers (each the
//     whole list) merge to the same devices;
//   - a request the agent does not answer in FullConfigWait expires, and
//     its configs merge again (a config held for an unreadable catalog
//     and checked after that merges too: merging never loses a device);
//   - an agent that does not answer renames or moves with a config, and
//     whose whole list is nothing but a device renamed or moved in the
//     last FullConfigWait and hubs, has that list merged: a device taken
//     off its controller then stays the gate's until the next config
//     request, the price of never dropping devices on MQTT-SberGate's
//     answers to renames.
//
// A config the agent sends first, after the gate started, has nothing to
// be merged into, so it is the whole list as far as the gate knows.
func (a *Agent) Config(c *Catalog, msg []byte) (*Report, error) {
	before, announcedBefore := a.last()
	noneKnown := func(string) known { return known{} }
	rep, models, err := c.validate(msg, noneKnown, &earlierConfig{announced: announcedBefore, models: before})
	if err != nil {
		return nil, err
	}
	if rep.Kind != "config" {
		return nil, &InvalidError{Details: []string{"up/config carries a list of devices"}}
	}
	answer := a.takeAnswer(rep.Devices, models)
	if answer {
		// The whole list: a child's parent must be in it. The provider's
		// models cached by id are not replaced with the list.
		if rep, models, err = c.validate(msg, noneKnown, &earlierConfig{models: before}); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// The maps are replaced, never changed (last), so the merge copies.
	byID := make(map[string]*Model, len(a.models)+len(rep.Devices))
	announced := make(map[string]bool, len(a.announced)+len(rep.Devices))
	if !answer {
		maps.Copy(byID, a.models)
		maps.Copy(announced, a.announced)
	}
	seen := make(map[string]bool, len(rep.Devices))
	var latest []string
	for i, d := range rep.Devices {
		if d.ID == "" || seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		announced[d.ID] = true
		if m := models[i]; m != nil && c.Categories[m.Category] != nil {
			byID[d.ID] = m
			latest = append(latest, d.ID)
		} else {
			// Announced again without a model the catalog knows: its
			// earlier model no longer describes it.
			delete(byID, d.ID)
		}
	}
	slices.Sort(latest)
	a.models, a.announced, a.latest, a.configured, a.asked = byID, announced, latest, true, false
	return rep, nil
}

// Latest lists the devices of the agent's latest up/config message whose
// model is of a category the catalog has, in order: the devices whose
// states the cloud asks for after that message (down/status_request),
// not every device the agent ever announced.
func (a *Agent) Latest() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.latest)
}

// Devices lists the ids of the devices the agent's configs announced whose
// model is of a category the catalog has, in order.
func (a *Agent) Devices() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return sortedKeys(a.models)
}

// last returns the agent's config as of now: both maps are replaced by
// Config, never changed, so one message is checked against one config
// throughout.
func (a *Agent) last() (models map[string]*Model, announced map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.models, a.announced
}

// knownOf says what a config's models tell of each device.
func knownOf(models map[string]*Model) func(id string) known {
	return func(id string) known {
		m := models[id]
		if m == nil {
			return known{}
		}
		return known{category: m.Category, model: m}
	}
}

// Status validates an up/status message ({"devices": {"<id>": {"states":
// [...]}}}) device by device, each against its configured model.
func (a *Agent) Status(c *Catalog, msg []byte) (*Report, error) {
	models, _ := a.last()
	rep, _, err := c.validate(msg, knownOf(models), nil)
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
// without states or a device the agent's configs did not announce is
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
	models, announced := a.last()
	deviceOf := knownOf(models)
	var details []string
	for _, id := range sortedKeys(m) {
		k := deviceOf(id)
		switch {
		case !announced[id]:
			details = append(details, "device '"+id+"' is not a device of the agent's config")
		case k.model == nil:
			details = append(details, "device '"+id+"' has no model of the catalog's categories in the agent's config")
		case len(m[id].States) == 0:
			details = append(details, "device '"+id+"': a command sets at least one state")
		default:
			r := newDeviceReport(id)
			r.Category = k.category
			c.checkStates(&r, k.model, m[id].States, true)
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

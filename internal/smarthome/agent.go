package smarthome

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"partnerapi/internal/jsonmsg"
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
	// window: the config requests outstanding together (RequestConfig)
	// and until when the next up/config is read as their answer, the
	// agent's whole list; nil when none is.
	window *answerWindow
	// changed: the renames and moves the gate sent, by device
	// (RenameRequested, MoveRequested), each until when the agent's
	// config of the device is expected as its answer; expired ones are
	// dropped by the next config (configanswer.go).
	changed map[string][]*expectedChange
	// now is the clock (time.Now unless a test sets it).
	now func() time.Time
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
// answer is the first config the agent sends after the first request
// outstanding, within FullConfigWait of it, that does not answer a rename
// or a move the gate sent (RenameRequested, MoveRequested). The gate is
// the agent's only cloud, so every rename and move the agent answers with
// a config of that one device came from it, and the config shows the
// change applied: such a config carries, beside hubs only (MQTT-SberGate
// sends its hub, "root", with every config; the answer to the request
// carries every device, the hub included), devices the gate asked to
// rename or move within FullConfigWait, each under its new name or in its
// new home and room. A config of that shape merges and leaves the config
// request outstanding, whether it comes before the answer or after it;
// any other config while a request is outstanding is its answer, a whole
// list of the renamed device, still under its old name, and hubs
// included. The rules for the races that remain are simple:
//
//   - a config of one device the agent sent on its own (not answering the
//     gate) before the request reached it is taken for the answer, and
//     the real answer, right behind it, is merged: as it lists every
//     device, the gate ends knowing exactly the agent's devices, having
//     missed the others between the two messages only;
//   - several requests outstanding make one window, which the first opens
//     and the others (the gate's re-ask, an administrator's) join without
//     pushing its end out: the first config in it replaces, the agent's
//     further answers (each the whole list) merge to the same devices;
//   - a window no config answers ends FullConfigWait after its first
//     request, and the agent's configs merge again (a config held for an
//     unreadable catalog and checked after that merges too: merging
//     never loses a device);
//   - an agent that applies a rename or a move but does not answer it
//     with a config, and whose whole list is nothing but that device,
//     renamed or moved in the last FullConfigWait, and hubs, has that
//     list merged: a device taken off its controller then stays the
//     gate's until the next config request, the price of never dropping
//     devices on MQTT-SberGate's answers to renames. The reference leaves
//     the answer to a rename open (§7 lists the request only), so this
//     reads the one real client it cites. The price is short: the merged
//     config leaves the request unanswered (ConfigRequest Unanswered), and
//     the gate, whose every config request is asked once more when none
//     answers it, asks again half a FullConfigWait after the first
//     request, within the window, and the same list then replaces.
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
	answer := a.takeAnswer(msg, rep.Devices, models)
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
			details = append(details, "device '"+jsonmsg.Echo(id)+"' is not a device of the agent's config")
		case k.model == nil:
			details = append(details, "device '"+jsonmsg.Echo(id)+"' has no model of the catalog's categories in the agent's config")
		case len(m[id].States) == 0:
			details = append(details, "device '"+jsonmsg.Echo(id)+"': a command sets at least one state")
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
		out = append(out, "device '"+jsonmsg.Echo(r.ID)+"': "+p)
	}
	return out
}

package smarthome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"partnerapi/internal/jsonexact"
	"partnerapi/internal/jsonmsg"
)

// The app's changes to a device: a user who renames a device, or moves it to
// another room or home, in the provider's app makes the cloud tell the agent
// on its down/rename_device_request or down/change_group_device_request
// (reference §7: "room/name changed in the app (home/room or new_name +
// device id)").
//
// The reference names home, room and new_name but writes the device's id as
// prose, "device id". It is read as the field device_id: snake case like its
// neighbours, and the name under which the community agents the reference
// cites ([C]) read both messages, one of which logs a message of the
// provider's cloud as {"device_id":…,"home":…,"room":…}. A group change
// carries home and room together, as that logged message does: agents store
// both fields from each message, so one left out would clear the device's
// home on their side.
//
// The agent is the source of truth for its config (reference §7: the cloud
// reads devices from up/config), so the gate keeps nothing of a change: it
// checks the device against the agent's up/config and forwards the
// change, and the agent's next up/config carries the new name or room, which
// the gate then reads like any config.

// RenameKind and GroupKind are the down/ topics (after "down/") of the app's
// changes to a device.
const (
	RenameKind = "rename_device_request"
	GroupKind  = "change_group_device_request"
)

// MaxPlacementName is the most characters a device's new name, home or room
// may have. The reference gives no limit, so this one is inferred: 128 is
// what the community agents keep of such a value (a longer one they drop),
// so every change the gate forwards is one they apply.
const MaxPlacementName = 128

// RenameRequest is a down/rename_device_request message.
type RenameRequest struct {
	DeviceID string `json:"device_id"`
	NewName  string `json:"new_name"`
}

// GroupRequest is a down/change_group_device_request message.
type GroupRequest struct {
	DeviceID string `json:"device_id"`
	Home     string `json:"home"`
	Room     string `json:"room"`
}

// UnknownDeviceError is a change to a device that the agent's up/config
// did not announce (or an agent that sent none): an ErrNotFound naming the
// device.
type UnknownDeviceError struct{ Device string }

func (e *UnknownDeviceError) Error() string {
	return "device '" + jsonmsg.Echo(e.Device) + "' is not a device of the agent's config"
}

// Is makes an UnknownDeviceError an ErrNotFound.
func (e *UnknownDeviceError) Is(target error) bool { return target == ErrNotFound }

// ParseRename reads a down/rename_device_request message as an administrator
// sends it and checks its fields; every problem is one detail of an
// InvalidError.
func ParseRename(msg []byte) (RenameRequest, error) {
	var r RenameRequest
	if err := decodeStrict(msg, &r, `{"device_id": "...", "new_name": "..."}`); err != nil {
		return r, err
	}
	details := append(checkDeviceID(r.DeviceID), checkPlacementName("new_name", r.NewName)...)
	if len(details) > 0 {
		return r, &InvalidError{Details: details}
	}
	return r, nil
}

// ParseGroup reads a down/change_group_device_request message as an
// administrator sends it and checks its fields; every problem is one detail
// of an InvalidError.
func ParseGroup(msg []byte) (GroupRequest, error) {
	var g GroupRequest
	if err := decodeStrict(msg, &g, `{"device_id": "...", "home": "...", "room": "..."}`); err != nil {
		return g, err
	}
	details := checkDeviceID(g.DeviceID)
	details = append(details, checkPlacementName("home", g.Home)...)
	details = append(details, checkPlacementName("room", g.Room)...)
	if len(details) > 0 {
		return g, &InvalidError{Details: details}
	}
	return g, nil
}

// Rename checks a rename against the agent's config and returns the
// message to publish, rebuilt from the parsed fields.
func (a *Agent) Rename(msg []byte) ([]byte, error) {
	r, err := ParseRename(msg)
	if err != nil {
		return nil, err
	}
	if err := a.checkAnnounced(r.DeviceID); err != nil {
		return nil, err
	}
	return marshalMessage(r)
}

// ChangeGroup checks a move to another home or room against the agent's
// config and returns the message to publish, rebuilt from the parsed
// fields.
func (a *Agent) ChangeGroup(msg []byte) ([]byte, error) {
	g, err := ParseGroup(msg)
	if err != nil {
		return nil, err
	}
	if err := a.checkAnnounced(g.DeviceID); err != nil {
		return nil, err
	}
	return marshalMessage(g)
}

// checkAnnounced is nil when the agent's config announced the device,
// whatever its model: the app lists, names and places every device the
// agent announces.
func (a *Agent) checkAnnounced(id string) error {
	_, announced := a.last()
	if !announced[id] {
		return &UnknownDeviceError{Device: id}
	}
	return nil
}

// decodeStrict decodes one JSON object into v, refusing unknown fields,
// anything after the object and bytes that are not UTF-8 (which the decoder
// would silently replace, sending the agent another name than was given).
func decodeStrict(msg []byte, v any, shape string) error {
	if !utf8.Valid(msg) {
		return &InvalidError{Details: []string{"body is not valid UTF-8"}}
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errors.New("data after the object")
		}
	}
	if err == nil {
		// "Device_ID" is a member v does not have, not a second
		// spelling of "device_id" (encoding/json would take it for one).
		if name := jsonexact.Inexact(msg, v); name != "" {
			err = fmt.Errorf("json: unknown field %q", name)
		}
	}
	if err != nil {
		return &InvalidError{Details: []string{"body must be " + shape + ": " + jsonmsg.Of(err)}}
	}
	return nil
}

func checkDeviceID(id string) []string {
	if id == "" {
		return []string{"device_id is required"}
	}
	return nil
}

// checkPlacementName checks a name, home or room as the app would show it:
// not blank, at most MaxPlacementName characters, and no control
// characters (a line break or a tab has no place in a one-line label).
func checkPlacementName(field, v string) []string {
	switch n := utf8.RuneCountInString(v); {
	case strings.TrimSpace(v) == "":
		return []string{field + " is required and cannot be blank"}
	case n > MaxPlacementName:
		return []string{fmt.Sprintf("%s is %d characters, more than %d", field, n, MaxPlacementName)}
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return []string{field + " cannot hold control characters (line breaks, tabs)"}
	}
	return nil
}

// marshalMessage encodes a down/ message compactly, leaving <, > and & as
// they are: a device named "Tom & Jerry" reaches the agent as typed.
func marshalMessage(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ErrorsKind is the down/ topic (after "down/") of the cloud's error reports.
const ErrorsKind = "errors"

// ErrorReport is a down/errors message that an administrator has the gate
// send, as the cloud reports a problem with an agent's message. The provider
// documents no body for down/errors (reference §7: clients only log it), so
// it has the shape of the gate's own reports of what it finds
// (homemqtt.Message): the topic of the agent's message it is about and why
// that message was refused. The per-device findings of the gate's reports
// come from checking a real message and are not made up here.
type ErrorReport struct {
	Topic  string   `json:"topic"`
	Errors []string `json:"errors"`
}

// ParseErrorReport reads an error report as an administrator sends it and
// returns the message to publish, rebuilt from the parsed fields.
func ParseErrorReport(msg []byte) ([]byte, error) {
	var e ErrorReport
	if err := decodeStrict(msg, &e, `{"topic": "up/config" or "up/status", "errors": ["..."]}`); err != nil {
		return nil, err
	}
	var details []string
	if e.Topic != "up/config" && e.Topic != "up/status" {
		details = append(details, "topic must be the agent's up/config or up/status, the messages the cloud reads")
	}
	if len(e.Errors) == 0 {
		details = append(details, "errors must list at least one error")
	}
	for i, s := range e.Errors {
		if strings.TrimSpace(s) == "" {
			details = append(details, fmt.Sprintf("errors[%d] is blank", i))
		}
	}
	if len(details) > 0 {
		return nil, &InvalidError{Details: details}
	}
	return marshalMessage(e)
}

// ConfigRequestKind is the down/ topic (after "down/") of the cloud's
// request for an agent's whole config (reference §7: "{} → reply on
// up/config"). An administrator has the gate send it to resynchronise
// with an agent without restarting serve: its answer replaces the devices
// the gate knows of the agent (Agent Config), so a device taken off the
// controller is forgotten.
const ConfigRequestKind = "config_request"

// ParseConfigRequest reads a down/config_request message as an
// administrator sends it, the empty object the reference gives, and
// returns the message to publish.
func ParseConfigRequest(msg []byte) ([]byte, error) {
	var empty struct{}
	if err := decodeStrict(msg, &empty, "{}"); err != nil {
		return nil, err
	}
	return []byte("{}"), nil
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"partnerapi/internal/smarthome"
)

// The app's changes to a device and the cloud's error reports, from the
// command line: what a user does in the provider's app, sent to an agent
// under test. Unlike the other smarthome commands these do not open the
// store: the MQTT gate and the agents' configs live in the running
// serve, so they go to its admin API (POST /v1/admin/agents/{login}/…),
// with an administrator's credentials, and print its answer.

const smarthomeAppUsage = `  partnerapi smarthome device rename --agent LOGIN --device ID --name NAME
  partnerapi smarthome device move --agent LOGIN --device ID --home HOME --room ROOM
  partnerapi smarthome agent errors --login LOGIN --topic up/config|up/status --error TEXT [--error TEXT ...]
  partnerapi smarthome agent config-request --login LOGIN
                                                    send what the app sends to an agent through serve's MQTT gate
                                                    (its admin API at --smarthome-url, default http://127.0.0.1:9445,
                                                    as --admin with --admin-password, best given as
                                                    PARTNERAPI_ADMIN_PASSWORD); prints {"topic": ...}; config-request
                                                    asks the agent for its whole config, whose answer replaces
                                                    the devices the gate knows (a device taken off the controller
                                                    is forgotten without restarting serve)`

// repeatedFlag collects every value of a flag given more than once.
type repeatedFlag []string

func (f *repeatedFlag) String() string     { return strings.Join(*f, ", ") }
func (f *repeatedFlag) Set(v string) error { *f = append(*f, v); return nil }

// runSmarthomeAppChange runs `smarthome device rename|move` and `smarthome
// agent errors|config-request`; handled is false for every other command.
func runSmarthomeAppChange(ctx context.Context, args []string, getenv func(string) string, io stdio) (handled bool, err error) {
	cmd := args[0] + " " + args[1]
	if cmd != "device rename" && cmd != "device move" && cmd != "agent errors" && cmd != "agent config-request" {
		return false, nil
	}
	fs := flag.NewFlagSet("smarthome "+cmd, flag.ContinueOnError)
	server := fs.String("smarthome-url", "http://127.0.0.1:9445", "the smart home listener of the serve that runs the MQTT gate")
	admin := fs.String("admin", "", "administrator login (partnerapi smarthome admin create)")
	password := fs.String("admin-password", "", "the administrator's password (better as PARTNERAPI_ADMIN_PASSWORD: a flag shows in the process list)")
	agent := fs.String("agent", "", "the agent's login (device commands)")
	login := fs.String("login", "", "the agent's login (agent errors, agent config-request)")
	device := fs.String("device", "", "device id, as the agent's up/config announced it")
	name := fs.String("name", "", "the device's new name")
	home := fs.String("home", "", "the device's home")
	room := fs.String("room", "", "the device's room")
	topic := fs.String("topic", "", "the agent's message the report is about: up/config or up/status")
	var reported repeatedFlag
	fs.Var(&reported, "error", "an error of the report (repeatable)")
	if err := parseFlags(fs, args[2:], getenv); err != nil {
		return true, err
	}
	if *admin == "" || *password == "" {
		return true, errors.New("--admin and --admin-password (or PARTNERAPI_ADMIN_PASSWORD) are required")
	}
	var kind string
	var body any
	switch cmd {
	case "device rename":
		kind, body = smarthome.RenameKind, smarthome.RenameRequest{DeviceID: *device, NewName: *name}
	case "device move":
		kind, body = smarthome.GroupKind, smarthome.GroupRequest{DeviceID: *device, Home: *home, Room: *room}
	case "agent config-request":
		kind, body, *agent = smarthome.ConfigRequestKind, struct{}{}, *login
	default:
		kind, body, *agent = smarthome.ErrorsKind, smarthome.ErrorReport{Topic: *topic, Errors: reported}, *login
	}
	if *agent == "" {
		return true, errors.New("the agent's login is required (--agent for device commands, --login for agent errors and config-request)")
	}
	b, _ := json.Marshal(body)
	url := strings.TrimRight(*server, "/") + "/v1/admin/agents/" + *agent + "/" + kind
	return true, postAdmin(ctx, url, *admin, *password, b, io.out)
}

// postAdmin sends one admin request and prints a 2xx answer's body; any
// other answer is an error quoting the Common error's message and details.
func postAdmin(ctx context.Context, url, login, password string, body []byte, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(login, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Message string   `json:"message"`
			Details []string `json:"details"`
		}
		if json.Unmarshal(answer, &e) != nil || e.Message == "" {
			return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(answer))
		}
		msg := fmt.Sprintf("%s: %s", resp.Status, e.Message)
		if len(e.Details) > 0 {
			msg += ": " + strings.Join(e.Details, "; ")
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			msg += " (retry after " + ra + " s)"
		}
		return errors.New(msg)
	}
	_, err = out.Write(answer)
	return err
}

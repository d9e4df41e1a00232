package main

// appChangeCases are the contract's rows for the app's changes to a device,
// the cloud's error reports and its config requests sent through the MQTT
// gate: each operation's
// 202 on the gated server, whose agent ctl-c announced the lamp l1; a device
// the agent did not announce and the server without the gate, 404; a name
// the server refuses, 400 (the contract refuses an over-long one itself);
// the agent's credentials, 401; the body limit, 413; the broker away, 503.
// Without a broker the 202 alone is not provoked.
func appChangeCases() []homeCase {
	const agents = "/v1/admin/agents/ctl-c/"
	type op struct{ name, path, body, unknown, bad, badContract string }
	ops := []op{
		{"rename", agents + "rename_device_request", `{"device_id":"l1","new_name":"Desk lamp"}`,
			`{"device_id":"ghost","new_name":"Desk lamp"}`, `{"device_id":"l1","new_name":"  "}`,
			`{"device_id":"l1","new_name":"` + longLabel + `"}`},
		{"change group", agents + "change_group_device_request", `{"device_id":"l1","home":"Home","room":"Study"}`,
			`{"device_id":"ghost","home":"Home","room":"Study"}`, `{"device_id":"l1","home":"Home","room":"a\nb"}`,
			`{"device_id":"l1","home":"Home"}`},
		{"errors", agents + "errors", `{"topic":"up/config","errors":["model 'x' is not in the catalog"]}`,
			"", `{"topic":"up/config","errors":[" "]}`, `{"topic":"down/commands","errors":["x"]}`},
		// Whatever the server refuses of a config request the contract
		// refuses too: it has no row of the server's own.
		{"config request", agents + "config_request", `{}`, "", "", `{"devices":[]}`},
	}
	var cases []homeCase
	for _, o := range ops {
		cases = append(cases,
			homeCase{name: o.name, method: "POST", path: o.path, who: "admin", gated: true, body: o.body, status: 202},
			// A request that is no such message is the client's fault,
			// gate or none, so these go to the server without one.
			homeCase{name: o.name + " refused by the contract", method: "POST", path: o.path, who: "admin", body: o.badContract, status: 400, badRequest: true},
			homeCase{name: o.name + " as agent", method: "POST", path: o.path, who: "agent", body: o.body, status: 401},
			homeCase{name: o.name + " while the broker is down", method: "POST", path: o.path, who: "admin", brokerDown: true, body: o.body, status: 503},
			homeCase{name: o.name + " without the gate", method: "POST", path: o.path, who: "admin", body: o.body, status: 404},
			homeCase{name: o.name + " over the body limit", method: "POST", path: o.path, who: "admin", body: overLimit(o.body), status: 413},
		)
		if o.bad != "" {
			cases = append(cases, homeCase{name: o.name + " refused by the server", method: "POST", path: o.path, who: "admin", body: o.bad, status: 400,
				serverOnly: "a blank name or error, or one with a control character, is refused by the server's rules, which the contract's schemas do not spell out"})
		}
		if o.unknown != "" {
			cases = append(cases, homeCase{name: o.name + " of a device the agent did not announce", method: "POST", path: o.path, who: "admin", gated: true, body: o.unknown, status: 404})
		}
	}
	return cases
}

// longLabel is a name of 129 characters, one over the limit.
const longLabel = "Настольная лампа у дивана в гостиной, которую переименовали в приложении, чтобы проверить предел длины имени устройства, ок!!!!!!"

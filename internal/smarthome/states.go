package smarthome

import "encoding/json"

// state is one entry of a device's states in up/status and down/commands
// (reference §7): a feature and its value.
type state struct {
	Key   string `json:"key"`
	Value Value  `json:"value"`
}

// deviceStates is one device of an up/status or down/commands message.
type deviceStates struct {
	States []state `json:"states"`
}

// parseStates reads the "devices" object of an up/status or down/commands
// message: device id → states.
func parseStates(devs json.RawMessage) (map[string]deviceStates, error) {
	var m map[string]deviceStates
	if err := json.Unmarshal(devs, &m); err != nil {
		return nil, &InvalidError{Details: []string{"devices: " + err.Error()}}
	}
	return m, nil
}

// checkStates checks a device's states against the catalog and, when the
// report names one, the device's category, adding what it finds to r.
func (c *Catalog) checkStates(r *DeviceReport, states []state) {
	for _, s := range states {
		f := c.Features[s.Key]
		if f == nil || (r.Category != "" && !c.Categories[r.Category].Has(s.Key)) {
			r.UnknownFeatures = append(r.UnknownFeatures, s.Key)
			continue
		}
		if p := checkValue(f, nil, s.Value); p != nil {
			r.addValueProblem(*p)
		}
	}
}

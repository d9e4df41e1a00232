package smarthome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"partnerapi/internal/jsonmsg"
)

// configDevice is one device of an up/config message, the provider's
// device object (reference §7), as far as the checks read it.
type configDevice struct {
	ID          string `json:"id"`
	ParentID    string `json:"parent_id"`
	Name        string `json:"name"`
	DefaultName string `json:"default_name"`
	ModelID     string `json:"model_id"`
	Model       *Model `json:"model"`
	// PartnerMeta is the partner's own data, any JSON the provider keeps
	// for it within maxPartnerMeta characters.
	PartnerMeta json.RawMessage `json:"partner_meta"`
}

// maxPartnerMeta is the most characters of JSON a device's partner_meta
// may have (reference §7, the provider's device object). The JSON is
// measured compacted: how an agent indents what it sends is not data.
const maxPartnerMeta = 1024

// earlierConfig is what an agent's earlier configs told the gate, for
// checkConfig: the devices they announced (a child's parent may be one of
// them) and each device's effective model (an inline model's id keeps its
// features). The maps are the Agent's, never changed.
type earlierConfig struct {
	announced map[string]bool
	models    map[string]*Model
}

// modelFeatures is the device and feature set under which an earlier
// config gave each model id, the first device in id order for each.
func (e *earlierConfig) modelFeatures() map[string]modelUse {
	out := map[string]modelUse{}
	for _, id := range sortedKeys(e.models) {
		m := e.models[id]
		if _, seen := out[m.ID]; m.ID != "" && !seen {
			out[m.ID] = modelUse{id, featureSet(m.Features)}
		}
	}
	return out
}

// modelUse is a model id's feature set as one device has it.
type modelUse struct {
	device   string
	features []string
}

// checkConfig checks the devices of an up/config message, each on its own
// and against each other, and returns their reports and effective models
// (nil where a device has none), in the message's order.
//
// Severities follow the reference: what §7 and the provider's device
// object mark mandatory (id, name, default_name; an inline model's id,
// manufacturer and model, §5), a second device with one id, a device that
// is its own parent and, for an agent's config, a parent_id that names no
// other device of the config or of the agent's earlier ones are errors;
// one model id given with two feature sets is a warning, because it breaks
// nothing the protocol states: integrators report that the provider caches
// models by id (§7, [C]), so one of the devices would be shown with the
// other's features.
//
// That cache outlives a message, and "changing features without changing
// the id leaves a stale model" (§7) is its very case, so with earlier
// configs an inline model is also checked against the models they gave:
// an id they gave other features (another device's, or this device's
// before) is the same warning. It costs one pass over the agent's devices,
// made only when the message has an inline model with an id. Catalog
// models named by model_id are not: an administrator who edits one
// changes it for every agent, and no agent can do anything about it.
//
// earlier is what the agent's earlier configs announced (nil: none, as for
// POST /v1/mqtt-gate/validate, which knows no agent): an agent may send
// only the devices that changed (see Agent Config), so a child's parent_id
// may name a hub of an earlier message; earlier.announced is nil for the
// answer to a config request, which is the whole list.
// Without earlier configs to look in, a parent_id that names no device of
// the message is a warning: the message alone cannot tell a child sent
// after a rename, whose hub the agent announced before, from a whole list
// that lacks the hub, and an error would call the first invalid.
func (c *Catalog) checkConfig(devs json.RawMessage, earlier *earlierConfig) ([]DeviceReport, []*Model, error) {
	var list []configDevice
	if err := json.Unmarshal(devs, &list); err != nil {
		return nil, nil, &InvalidError{Details: []string{"devices: " + jsonmsg.Of(err)}}
	}
	reps := make([]DeviceReport, len(list))
	models := make([]*Model, len(list))
	ids := map[string]bool{}
	for i, d := range list {
		reps[i], models[i] = c.checkDevice(d.ID, d.ModelID, d.Model)
		r := &reps[i]
		if strings.TrimSpace(d.Name) == "" {
			r.Errors = append(r.Errors, "name is required")
		}
		if strings.TrimSpace(d.DefaultName) == "" {
			r.Errors = append(r.Errors, "default_name is required")
		}
		if n := partnerMetaLength(d.PartnerMeta); n > maxPartnerMeta {
			r.Errors = append(r.Errors, fmt.Sprintf("partner_meta is %d characters of JSON, more than the %d the provider keeps", n, maxPartnerMeta))
		}
		if d.ID != "" && ids[d.ID] {
			r.Errors = append(r.Errors, fmt.Sprintf("device id '%s' is already used by an earlier device", jsonmsg.Echo(d.ID)))
		}
		ids[d.ID] = true
	}
	// A second pass: a parent may come after its children.
	byModel := map[string]modelUse{}
	var before map[string]modelUse // earlier.modelFeatures, once needed
	for i, d := range list {
		r := &reps[i]
		switch {
		case d.ParentID == "" || d.ParentID != d.ID && (ids[d.ParentID] || earlier != nil && earlier.announced[d.ParentID]):
		case d.ParentID != d.ID && earlier == nil:
			r.Warnings = append(r.Warnings, Problem{Reason: ReasonParentNotInConfig, Message: fmt.Sprintf(
				"parent_id '%s' is not a device of this config: right if the agent announced it in an earlier config, wrong if this is its whole list", jsonmsg.Echo(d.ParentID))})
		case earlier == nil:
			r.Errors = append(r.Errors, fmt.Sprintf("parent_id '%s' is not another device of this config", jsonmsg.Echo(d.ParentID)))
		default:
			r.Errors = append(r.Errors, fmt.Sprintf("parent_id '%s' is not another device of the agent's config", jsonmsg.Echo(d.ParentID)))
		}
		m := models[i]
		if m == nil || m.ID == "" {
			continue
		}
		features := featureSet(m.Features)
		f, seen := byModel[m.ID]
		switch {
		case !seen:
			byModel[m.ID] = modelUse{d.ID, features}
		case !slices.Equal(f.features, features):
			r.Warnings = append(r.Warnings, Problem{Reason: ReasonModelConflict, Message: fmt.Sprintf(
				"model '%s' has features %s here but %s in device '%s': the provider caches models by id, so one of the two would be shown with the other's features",
				jsonmsg.Echo(m.ID), jsonmsg.Echo(strings.Join(features, ", ")), jsonmsg.Echo(strings.Join(f.features, ", ")), jsonmsg.Echo(f.device))})
			continue
		}
		if earlier == nil || d.Model == nil {
			continue
		}
		if before == nil {
			before = earlier.modelFeatures()
		}
		if f, seen := before[m.ID]; seen && !slices.Equal(f.features, features) {
			r.Warnings = append(r.Warnings, Problem{Reason: ReasonModelConflict, Message: fmt.Sprintf(
				"model '%s' has features %s here but %s in device '%s' of an earlier config: the provider caches models by id, so this device would be shown with the earlier features; give a changed model a new id",
				jsonmsg.Echo(m.ID), jsonmsg.Echo(strings.Join(features, ", ")), jsonmsg.Echo(strings.Join(f.features, ", ")), jsonmsg.Echo(f.device))})
		}
	}
	return reps, models, nil
}

// partnerMetaLength is the length in characters of partner_meta's JSON
// without insignificant white space; 0 when it is absent or null.
func partnerMetaLength(raw json.RawMessage) int {
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return utf8.RuneCount(raw)
	}
	return utf8.RuneCount(b.Bytes())
}

// featureSet is a list of features as a set: sorted, without repeats.
func featureSet(fs []string) []string {
	out := slices.Clone(fs)
	slices.Sort(out)
	return slices.Compact(out)
}

// checkDevice checks one device of a config on its own and returns its
// effective model: the inline one, or the catalog's named by model_id; nil
// when it has none.
func (c *Catalog) checkDevice(id, modelID string, m *Model) (DeviceReport, *Model) {
	// A device names a registered model or carries its own, exactly one of
	// the two (reference §7): with both, which one the cloud would use is
	// not documented, so neither is guessed.
	if m != nil && modelID != "" {
		r := newDeviceReport(id)
		r.Errors = append(r.Errors, "device has both model_id and model: give exactly one")
		return r, nil
	}
	inline := m != nil
	if m == nil && modelID != "" {
		for i := range c.Models {
			if c.Models[i].ID == modelID {
				registered := c.Models[i]
				m = &registered
			}
		}
		if m == nil {
			r := newDeviceReport(id)
			r.Errors = append(r.Errors, fmt.Sprintf("model_id '%s' is not in the catalog", jsonmsg.Echo(modelID)))
			return r, nil
		}
	}
	if m == nil {
		r := newDeviceReport(id)
		r.Errors = append(r.Errors, "device has neither model nor model_id")
		return r, nil
	}
	r := c.checkModel(m)
	r.ID = id
	if id == "" {
		r.Errors = append(r.Errors, "device id is required")
	}
	// The catalog's own models were checked when they were stored; an
	// inline one needs the fields a model may not lack (§5).
	if inline {
		for _, f := range []struct{ name, value string }{{"id", m.ID}, {"manufacturer", m.Manufacturer}, {"model", m.Model}} {
			if strings.TrimSpace(f.value) == "" {
				r.Errors = append(r.Errors, "model: "+f.name+" is required")
			}
		}
	}
	return r, m
}

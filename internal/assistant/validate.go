package assistant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"partnerapi/internal/jsonmsg"
	"slices"
	"sort"
	"strconv"
)

// FunctionRulesVersion is the json_ai_rules_version /functions/validate
// reports (the provider's current one, reference §3.8).
const FunctionRulesVersion = "1.0.5"

// FunctionIssue is one finding of ValidateFunction; SchemaLocation is
// "(root)" or a dotted path such as "parameters.properties.city".
type FunctionIssue struct {
	Description    string
	SchemaLocation string
}

// FunctionValidation is the outcome of ValidateFunction.
type FunctionValidation struct {
	Errors   []FunctionIssue
	Warnings []FunctionIssue
}

// Valid reports whether no errors were found (warnings do not count).
func (v FunctionValidation) Valid() bool { return len(v.Errors) == 0 }

type validation struct{ FunctionValidation }

func (v *validation) fail(loc, format string, args ...any) {
	v.Errors = append(v.Errors, FunctionIssue{fmt.Sprintf(format, args...), loc})
}

func (v *validation) warn(loc, format string, args ...any) {
	v.Warnings = append(v.Warnings, FunctionIssue{fmt.Sprintf(format, args...), loc})
}

// ValidateFunction checks one function description (the body of
// POST /functions/validate, reference §3.8): the name rules of §3.2,
// parameters as a JSON Schema object, and few-shot examples that match it.
// It refuses with a 400 only a body that is not a JSON object at all;
// everything else is a finding.
func ValidateFunction(raw []byte) (FunctionValidation, error) {
	var fn map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fn); err != nil || fn == nil {
		return FunctionValidation{}, badRequest("the body must be one function description, a JSON object")
	}
	// The members a chat reads of an offered function are read here as
	// the chat reads them, with encoding/json into a struct, which
	// matches member names in any letter case, the last match winning:
	// looked up by their exact names, {"name":"ok","NAME":"1x"} was valid
	// here and refused by the chat, whose function is named 1x.
	var chat struct {
		Name        json.RawMessage `json:"name"`
		Description json.RawMessage `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	_ = json.Unmarshal(raw, &chat) // any object decodes so
	var v validation
	const root = "(root)"

	var name string
	switch rawName, ok := chat.Name, chat.Name != nil; {
	case !ok || isNull(rawName):
		v.fail(root, "name is required")
	case json.Unmarshal(rawName, &name) != nil:
		v.fail("name", "name must be a string")
	case name == "":
		v.fail(root, "name is required")
	case !functionName.MatchString(name):
		v.fail("name", "name must consist of Latin letters, digits and underscores and must not start with a digit")
	}

	var desc string
	if rawDesc, ok := chat.Description, chat.Description != nil; !ok || isNull(rawDesc) {
		v.warn(root, "description is missing")
	} else if json.Unmarshal(rawDesc, &desc) != nil {
		v.fail("description", "description must be a string")
	} else if desc == "" {
		v.warn(root, "description is missing")
	}

	var props map[string]json.RawMessage
	if rawParams, ok := chat.Parameters, chat.Parameters != nil; !ok || isNull(rawParams) {
		v.fail(root, "parameters is required")
	} else if schema, ok := v.object("parameters", rawParams, "parameters must be a JSON Schema object"); ok {
		if t := schemaTypes(schema["type"]); !slices.Equal(t, []string{"object"}) {
			v.fail("parameters", `parameters.type must be "object"`)
		}
		v.schema("parameters", schema)
		_ = json.Unmarshal(schema["properties"], &props)
	}

	if rawRet, ok := fn["return_parameters"]; ok && !isNull(rawRet) {
		if schema, ok := v.object("return_parameters", rawRet, "return_parameters must be a JSON Schema object"); ok {
			v.schema("return_parameters", schema)
		}
	}

	rawShots, ok := fn["few_shot_examples"]
	var shots []json.RawMessage
	switch {
	case !ok || isNull(rawShots):
		v.warn(root, "few_shot_examples are missing")
	case json.Unmarshal(rawShots, &shots) != nil:
		v.fail("few_shot_examples", "few_shot_examples must be an array")
	case len(shots) == 0:
		v.warn(root, "few_shot_examples are missing")
	}
	for i, shot := range shots {
		loc := "few_shot_examples." + strconv.Itoa(i)
		ex, ok := v.object(loc, shot, "a few-shot example must be an object {request, params}")
		if !ok {
			continue
		}
		var req string
		if json.Unmarshal(ex["request"], &req) != nil || req == "" {
			v.fail(loc, "request is required and must be a non-empty string")
		}
		params, ok := v.object(loc+".params", ex["params"], "params must be an object of arguments")
		if !ok || props == nil {
			continue
		}
		for _, k := range sortedKeys(params) {
			if _, known := props[k]; !known {
				v.fail(loc+".params", "params.%s is not one of parameters.properties", jsonmsg.Echo(k))
			}
		}
	}
	return v.FunctionValidation, nil
}

// object decodes raw as a JSON object, recording msg at loc when it is not.
func (v *validation) object(loc string, raw json.RawMessage, msg string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil || obj == nil {
		v.fail(loc, "%s", msg)
		return nil, false
	}
	return obj, true
}

var jsonSchemaTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// schema checks the parts of a JSON Schema that function calling relies
// on: known types, properties that are schemas, required naming existing
// properties, non-empty enums, and array items; nested schemas recursively.
func (v *validation) schema(loc string, s map[string]json.RawMessage) {
	if raw, ok := s["type"]; ok {
		types := schemaTypes(raw)
		if len(types) == 0 {
			v.fail(loc, "type must be a JSON Schema type name or an array of them")
		}
		for _, t := range types {
			if !slices.Contains(jsonSchemaTypes, t) {
				v.fail(loc, "type %q is not a JSON Schema type", jsonmsg.Echo(t))
			}
		}
	}
	var props map[string]json.RawMessage
	if raw, ok := s["properties"]; ok {
		if p, ok := v.object(loc+".properties", raw, "properties must be an object of schemas"); ok {
			props = p
			for _, k := range sortedKeys(p) {
				ploc := loc + ".properties." + jsonmsg.Echo(k)
				if ps, ok := v.object(ploc, p[k], "a property must be a JSON Schema object"); ok {
					if _, has := ps["description"]; !has {
						v.warn(ploc, "description is missing")
					}
					v.schema(ploc, ps)
				}
			}
		}
	}
	if raw, ok := s["required"]; ok {
		var req []string
		if json.Unmarshal(raw, &req) != nil {
			v.fail(loc+".required", "required must be an array of property names")
		}
		for _, k := range req {
			if _, known := props[k]; !known {
				v.fail(loc+".required", "required property %q is not in properties", jsonmsg.Echo(k))
			}
		}
	}
	if raw, ok := s["enum"]; ok {
		var vals []json.RawMessage
		if json.Unmarshal(raw, &vals) != nil || len(vals) == 0 {
			v.fail(loc+".enum", "enum must be a non-empty array")
		}
	}
	if raw, ok := s["items"]; ok {
		if is, ok := v.object(loc+".items", raw, "items must be a JSON Schema object"); ok {
			v.schema(loc+".items", is)
		}
	}
}

// schemaTypes reads "type": a name or an array of names; nil if neither.
func schemaTypes(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

package smarthome

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"partnerapi/internal/jsonexact"
)

// Ranges replace the default ranges of numeric features, by feature name.
// Several ranges of the catalog (and the units they are in) come from a
// third party's transcription of the provider's pages, not from the
// official function pages (reference §6.2 Src T, catalog source
// "third_party", inconsistency #14), and the reference asks for them to
// be configurable: a deployment whose devices report a current above the
// transcribed 30 000 mA, say, widens it instead of having every status
// refused. The ranges are checked against, and a model's allowed_values
// compared with, the replaced range; no GET endpoint shows ranges, so the
// catalog's wire bytes and ETag stay the same.
type Ranges map[string]Range

// ParseRanges reads ranges from JSON, {"<feature>": {"min": n, "max": n,
// "step": n}, ...} with step optional, refusing members it does not know,
// a range without both bounds (which would otherwise narrow its feature
// to 0 at one end) and anything after the object (a file cut short or two
// run together, whose rest would be ignored).
func ParseRanges(b []byte) (Ranges, error) {
	var wire map[string]struct {
		Min  *float64 `json:"min"`
		Max  *float64 `json:"max"`
		Step float64  `json:"step"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wire); err != nil {
		return nil, fmt.Errorf("ranges: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("ranges: data after the object")
	}
	if name := jsonexact.Inexact(b, &wire); name != "" {
		return nil, fmt.Errorf("ranges: json: unknown field %q", name)
	}
	if wire == nil {
		return nil, nil
	}
	r := make(Ranges, len(wire))
	for _, name := range sortedKeys(wire) {
		w := wire[name]
		if w.Min == nil || w.Max == nil {
			return nil, fmt.Errorf("ranges: feature '%s' needs both min and max", name)
		}
		r[name] = Range{Min: *w.Min, Max: *w.Max, Step: w.Step}
	}
	return r, nil
}

// CheckRanges reports the first range that cannot replace its feature's in
// c: an unknown feature, one that is neither INTEGER nor FLOAT, bounds the
// wrong way round, a negative step, or an INTEGER range with a fraction.
func (c *Catalog) CheckRanges(r Ranges) error {
	for _, name := range sortedKeys(r) {
		rg := r[name]
		f, ok := c.Features[name]
		switch {
		case !ok:
			return fmt.Errorf("ranges: feature '%s' is not in the catalog", name)
		case f.DataType != Integer && f.DataType != Float:
			return fmt.Errorf("ranges: feature '%s' is %s; only INTEGER and FLOAT features have ranges", name, f.DataType)
		case math.IsNaN(rg.Min) || math.IsNaN(rg.Max) || rg.Min > rg.Max:
			return fmt.Errorf("ranges: feature '%s' needs min <= max", name)
		case rg.Step < 0 || math.IsNaN(rg.Step):
			return fmt.Errorf("ranges: feature '%s' has a negative step", name)
		case f.DataType == Integer && (rg.Min != math.Trunc(rg.Min) || rg.Max != math.Trunc(rg.Max) || rg.Step != math.Trunc(rg.Step)):
			return fmt.Errorf("ranges: feature '%s' is INTEGER; its min, max and step must be whole", name)
		}
	}
	return nil
}

// WithRanges returns the catalog with r's ranges in place of its
// features' defaults. c is left as it is: a catalog is shared by every
// request that holds it.
func (c *Catalog) WithRanges(r Ranges) *Catalog {
	if len(r) == 0 {
		return c
	}
	out := *c
	out.Features = make(map[string]*Feature, len(c.Features))
	for name, f := range c.Features {
		if rg, ok := r[name]; ok {
			replaced := *f
			replaced.Range = &rg
			f = &replaced
		}
		out.Features[name] = f
	}
	return &out
}

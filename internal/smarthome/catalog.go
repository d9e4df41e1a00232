// Package smarthome is the domain of the smart-home device information API:
// the catalog of categories, features and models an MQTT agent reads, the
// validation of the messages such an agent publishes, and the credentials of
// agents and catalog administrators. It knows neither HTTP nor SQL.
package smarthome

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"partnerapi/internal/jsonmsg"
	"slices"
	"sort"
	"sync"
	"time"
)

// Data types of features (reference §4).
const (
	Bool    = "BOOL"
	Integer = "INTEGER"
	Float   = "FLOAT"
	String  = "STRING"
	Enum    = "ENUM"
	Colour  = "COLOUR"
)

var dataTypes = map[string]bool{Bool: true, Integer: true, Float: true, String: true, Enum: true, Colour: true}

// Domain errors; the transport maps them to the Common error.
var (
	ErrNotFound     = errors.New("not found")
	ErrDuplicate    = errors.New("already exists")
	ErrUnauthorized = errors.New("unauthorized")
)

// UnknownCategoryError is a category the catalog (as its profile serves it)
// does not have; it is an ErrNotFound that names the category, so every
// API words it the same whether the category came in the path or a query.
type UnknownCategoryError struct{ Category string }

func (e *UnknownCategoryError) Error() string {
	return fmt.Sprintf("category %q: not found", jsonmsg.Echo(e.Category))
}

// Is makes an UnknownCategoryError an ErrNotFound.
func (e *UnknownCategoryError) Is(target error) bool { return target == ErrNotFound }

// InvalidError is bad input with one detail per problem.
type InvalidError struct{ Details []string }

func (e *InvalidError) Error() string { return fmt.Sprintf("invalid: %v", e.Details) }

// Range is a numeric default range a model's allowed_values may narrow.
type Range struct {
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Step float64 `json:"step,omitempty"`
}

// Access of features (reference §6.2): what the device does with one.
const (
	AccessRead      = "r"     // reports state
	AccessReadWrite = "rw"    // stores state and can be changed
	AccessMaybeRW   = "rw?"   // probably rw: taken as rw
	AccessWrite     = "w"     // command only, no stored state
	AccessEvent     = "event" // a notification
)

var accesses = map[string]bool{AccessRead: true, AccessReadWrite: true, AccessMaybeRW: true, AccessWrite: true, AccessEvent: true}

// Feature is one function of the catalog.
type Feature struct {
	Name     string `json:"-"`
	DataType string `json:"data_type"`
	// Access is what the device does with the feature (§6.2); it is not
	// on the wire of the GET endpoints, which the reference shows without it.
	Access string   `json:"access"`
	Enum   []string `json:"enum,omitempty"`
	// Tolerated are enum values accepted on input although the function's
	// own list lacks them (sensor_sensitive "auto", inconsistency #6).
	Tolerated []string              `json:"tolerated,omitempty"`
	Range     *Range                `json:"range,omitempty"`
	Colour    map[string][2]float64 `json:"colour,omitempty"`
}

// Commandable reports whether the cloud may send the feature in a command:
// read-only states and events are the device's to report, not to be set.
func (f *Feature) Commandable() bool {
	return f.Access == AccessReadWrite || f.Access == AccessMaybeRW || f.Access == AccessWrite
}

// Category is a device category with its features in stable (ASCII) order.
type Category struct {
	Name           string                  `json:"-"`
	Features       []string                `json:"features"`
	Required       []string                `json:"required"`
	OneOf          [][]string              `json:"required_one_of,omitempty"`
	Dependencies   map[string]Dependency   `json:"dependencies,omitempty"`
	ExampleAllowed map[string]AllowedValue `json:"example_allowed_values,omitempty"`
}

// IsRequired reports whether the feature is unconditionally required.
func (c *Category) IsRequired(feature string) bool {
	for _, r := range c.Required {
		if r == feature {
			return true
		}
	}
	return false
}

// Has reports whether the category lists the feature.
func (c *Category) Has(feature string) bool {
	for _, f := range c.Features {
		if f == feature {
			return true
		}
	}
	return false
}

// Model is a device model as GET /v1/mqtt-gate/models returns it (§5).
type Model struct {
	ID            string                  `json:"id"`
	Manufacturer  string                  `json:"manufacturer"`
	Model         string                  `json:"model"`
	HWVersion     string                  `json:"hw_version,omitempty"`
	SWVersion     string                  `json:"sw_version,omitempty"`
	Description   string                  `json:"description,omitempty"`
	Category      string                  `json:"category"`
	Features      []string                `json:"features"`
	Dependencies  map[string]Dependency   `json:"dependencies,omitempty"`
	AllowedValues map[string]AllowedValue `json:"allowed_values,omitempty"`
}

// Catalog is one version of the whole catalog.
type Catalog struct {
	Version int64
	Label   string
	// Updated is when this version was made, to the second (the store's
	// clock); zero where unknown, as in the built-in seed.
	Updated    time.Time
	Features   map[string]*Feature
	Categories map[string]*Category
	Models     []Model // sorted by id
}

// CategoryNames lists the categories in ASCII order.
func (c *Catalog) CategoryNames() []string {
	out := make([]string, 0, len(c.Categories))
	for n := range c.Categories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Without returns the catalog without the named categories, their models
// and the features no other category has: the catalog as a profile serves
// it (reference §6.1, #13: the 2025-11 profile has no sensor_air). c is
// not changed; the result shares its unchanged parts.
func (c *Catalog) Without(hide []string) *Catalog {
	if len(hide) == 0 {
		return c
	}
	hidden := map[string]bool{}
	for _, n := range hide {
		hidden[n] = true
	}
	out := &Catalog{Version: c.Version, Label: c.Label, Updated: c.Updated, Features: map[string]*Feature{},
		Categories: map[string]*Category{}, Models: []Model{}}
	for n, cat := range c.Categories {
		if hidden[n] {
			continue
		}
		out.Categories[n] = cat
		for _, f := range cat.Features {
			out.Features[f] = c.Features[f]
		}
	}
	for _, m := range c.Models {
		if !hidden[m.Category] {
			out.Models = append(out.Models, m)
		}
	}
	return out
}

// ModelsOf lists the catalog's models of the given categories, in the
// catalog's order (by id), for GET /v1/mqtt-gate/models?category=, an
// extension the reference leaves room for (§8.7). A category the catalog
// (as its profile serves it) does not have is an UnknownCategoryError,
// the reference's 404 for an unknown category (§3), rather than an empty
// list: a misspelt name would otherwise read as "no models", and clients
// cache the models list for good (§8.5). A name given twice counts once.
func (c *Catalog) ModelsOf(categories []string) ([]Model, error) {
	want := make(map[string]bool, len(categories))
	for _, n := range categories {
		if c.Categories[n] == nil {
			return nil, &UnknownCategoryError{Category: n}
		}
		want[n] = true
	}
	out := []Model{}
	for _, m := range c.Models {
		if want[m.Category] {
			out = append(out, m)
		}
	}
	return out, nil
}

// FeatureRef is one entry of GET .../categories/{c}/features.
type FeatureRef struct {
	Name     string `json:"name"`
	DataType string `json:"data_type"`
	Required bool   `json:"required"`
}

// CategoryFeatures lists a category's features as the API returns them.
func (c *Catalog) CategoryFeatures(category string) ([]FeatureRef, error) {
	cat, ok := c.Categories[category]
	if !ok {
		return nil, &UnknownCategoryError{Category: category}
	}
	out := make([]FeatureRef, 0, len(cat.Features))
	for _, f := range cat.Features {
		out = append(out, FeatureRef{Name: f, DataType: c.Features[f].DataType, Required: cat.IsRequired(f)})
	}
	return out, nil
}

//go:embed catalog.json
var seedJSON []byte

// Seed returns the project's built-in catalog (built from the reference
// catalog) that a fresh store starts from: the models of the catalog file
// and, for each category none of them has, the provider's placeholder
// model.
func Seed() (*Catalog, error) {
	c, err := ParseCatalog(seedJSON)
	if err != nil {
		return nil, err
	}
	if err := c.addPlaceholders(); err != nil {
		return nil, err
	}
	return c, nil
}

// addPlaceholders gives each category without a model the placeholder
// model the provider's category pages show (reference §5: QWERTY124,
// Xiaqara SM1123456789, hw 3.1, sw 5.6) with the category's features,
// dependencies and example allowed_values, so that the seeded models list
// has one model per category, as §5 suggests. A model id names one model,
// so each placeholder's id is QWERTY124-<category>.
func (c *Catalog) addPlaceholders() error {
	covered := map[string]bool{}
	for _, m := range c.Models {
		covered[m.Category] = true
	}
	for _, name := range c.CategoryNames() {
		if covered[name] {
			continue
		}
		cat := c.Categories[name]
		m := Model{ID: "QWERTY124-" + name, Manufacturer: "Xiaqara", Model: "SM1123456789", HWVersion: "3.1", SWVersion: "5.6",
			Description: "Xiaqara placeholder " + name, Category: name, Features: slices.Clone(cat.Features)}
		if len(cat.Dependencies) > 0 {
			m.Dependencies = maps.Clone(cat.Dependencies)
		}
		if len(cat.ExampleAllowed) > 0 {
			m.AllowedValues = maps.Clone(cat.ExampleAllowed)
		}
		if d := c.CheckModel(&m); len(d) > 0 {
			return fmt.Errorf("catalog: placeholder model %s: %v", m.ID, d)
		}
		c.Models = append(c.Models, m)
	}
	sort.Slice(c.Models, func(i, j int) bool { return c.Models[i].ID < c.Models[j].ID })
	return nil
}

// seedOnce is the built-in catalog parsed once, for reading only.
var seedOnce = sync.OnceValues(Seed)

// adoptAccess gives each feature without an access the built-in catalog's:
// a store seeded before features carried their access keeps them without,
// and since features are only ever written by the seed, the built-in
// catalog's access is theirs. A feature the built-in catalog lacks is
// taken as read-only, the access that lets nothing be commanded.
func (c *Catalog) adoptAccess() error {
	var seed *Catalog
	for n, f := range c.Features {
		if f.Access != "" {
			continue
		}
		if seed == nil {
			var err error
			if seed, err = seedOnce(); err != nil {
				return err
			}
		}
		f.Access = AccessRead
		if sf := seed.Features[n]; sf != nil {
			f.Access = sf.Access
		}
	}
	return nil
}

// ParseCatalog reads a catalog file and checks it is self-consistent.
func ParseCatalog(b []byte) (*Catalog, error) {
	var doc struct {
		Label      string               `json:"label"`
		Features   map[string]*Feature  `json:"features"`
		Categories map[string]*Category `json:"categories"`
		Models     []Model              `json:"models"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := &Catalog{Label: doc.Label, Features: doc.Features, Categories: doc.Categories, Models: doc.Models}
	for n, f := range c.Features {
		f.Name = n
		if !dataTypes[f.DataType] {
			return nil, fmt.Errorf("catalog: feature %s: unknown data type %q", n, f.DataType)
		}
		if !accesses[f.Access] {
			return nil, fmt.Errorf("catalog: feature %s: unknown access %q", n, f.Access)
		}
	}
	for n, cat := range c.Categories {
		cat.Name = n
		if !sort.StringsAreSorted(cat.Features) {
			return nil, fmt.Errorf("catalog: category %s: features not in ASCII order", n)
		}
		for _, f := range cat.Features {
			if c.Features[f] == nil {
				return nil, fmt.Errorf("catalog: category %s: unknown feature %s", n, f)
			}
		}
		if !cat.IsRequired("online") {
			return nil, fmt.Errorf("catalog: category %s: online must be required", n)
		}
	}
	for _, m := range c.Models {
		if d := c.CheckModel(&m); len(d) > 0 {
			return nil, fmt.Errorf("catalog: model %s: %v", m.ID, d)
		}
	}
	sort.Slice(c.Models, func(i, j int) bool { return c.Models[i].ID < c.Models[j].ID })
	return c, nil
}

// Package api embeds the OpenAPI 3.1 contracts of the three APIs. Each
// listener serves its own at /openapi.yaml, and each API's tests compare the
// routes its server registers with the paths its contract names, so the two
// cannot drift apart.
package api

import (
	"embed"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed banking.yaml assistant.yaml smarthome.yaml
var files embed.FS

// Spec returns the contract of one API: banking, assistant or smarthome.
func Spec(name string) []byte {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		panic(fmt.Sprintf("api: no contract named %q", name))
	}
	return b
}

// Operation is one method and path of a contract, with the path in
// http.ServeMux pattern syntax (OpenAPI's {param} is the same).
type Operation struct {
	Method string
	Path   string
}

var methods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true}

// Operations lists the operations a contract names, sorted.
func Operations(spec []byte) ([]Operation, error) {
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		return nil, fmt.Errorf("contract: openapi version %q, want 3.1.x", doc.OpenAPI)
	}
	var out []Operation
	for path, item := range doc.Paths {
		for m := range item {
			if methods[m] {
				out = append(out, Operation{Method: strings.ToUpper(m), Path: path})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out, nil
}

// Diff compares the contract's operations with the server's routes and
// describes every operation found on one side only; "" means they agree.
func Diff(spec []byte, routes []Operation) (string, error) {
	ops, err := Operations(spec)
	if err != nil {
		return "", err
	}
	inSpec := map[Operation]bool{}
	for _, o := range ops {
		inSpec[o] = true
	}
	inServer := map[Operation]bool{}
	for _, r := range routes {
		inServer[r] = true
	}
	var b strings.Builder
	for _, r := range routes {
		if !inSpec[r] {
			fmt.Fprintf(&b, "server registers %s %s, the contract lacks it\n", r.Method, r.Path)
		}
	}
	for _, o := range ops {
		// A GET route serves HEAD too (web.Mux, as http.ServeMux), so a
		// contract may describe HEAD where the server registers GET alone.
		if o.Method == "HEAD" && inServer[Operation{Method: "GET", Path: o.Path}] {
			continue
		}
		if !inServer[o] {
			fmt.Fprintf(&b, "contract names %s %s, the server lacks it\n", o.Method, o.Path)
		}
	}
	return b.String(), nil
}

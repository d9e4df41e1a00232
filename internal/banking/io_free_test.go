package banking

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The banking domain does no I/O of its own (README, house style): files
// are bankkeys', SQL is bankingsql's, HTTP is bankapi's. A domain file
// importing one of these packages is a dependency in the wrong place.
func TestDomainImportsNoIO(t *testing.T) {
	forbidden := map[string]string{
		"os":            "files belong in bankkeys or the wiring",
		"io/fs":         "files belong in bankkeys or the wiring",
		"path/filepath": "files belong in bankkeys or the wiring",
		"io/ioutil":     "files belong in bankkeys or the wiring",
		"database/sql":  "SQL belongs in bankingsql",
		"net/http":      "HTTP belongs in bankapi",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbidden[path]; bad {
				t.Errorf("%s imports %s: %s", name, path, why)
			}
		}
	}
}

package chattemplate

import (
	"errors"
	"reflect"
	"strings"
	"unicode"

	gonjabuiltins "github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Where gonja departs from the Python Jinja that chat templates are
// written and tested against, on constructs real templates use, this file
// brings it back: str.lstrip()/rstrip() without an argument and
// str.replace(old, new) without a count raise in gonja, x[-k] with k equal
// to len(x) is empty (Mistral v0.3's user_messages[-1] with one user
// message), and tojson is compact with sorted keys where Hugging Face's is
// json.dumps (separators ", " and ": ", keys in insertion order; tojson.go).

// pyEnvironment is gonja's default environment with those fixes: its own
// filter set and string methods, so gonja's globals stay untouched.
func pyEnvironment() *exec.Environment {
	env := *gonjaDefault
	env.Filters = exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(gonjabuiltins.Filters)
	if err := env.Filters.Replace("tojson", filterToJSON); err != nil {
		panic(err)
	}
	str := map[string]exec.Method[string]{}
	for _, name := range strMethodNames {
		if m, ok := gonjabuiltins.Methods.Str.Get(name); ok {
			str[name] = m
		}
	}
	str["lstrip"] = func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		return pyStrip(self, args, strings.TrimLeftFunc, strings.TrimLeft), nil
	}
	str["rstrip"] = func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		return pyStrip(self, args, strings.TrimRightFunc, strings.TrimRight), nil
	}
	str["replace"] = pyReplace
	env.Methods.Str = exec.NewMethodSet(str)
	dict := map[string]exec.Method[map[string]any]{}
	for _, name := range []string{"keys", "values", "items", "get", "pop", "setdefault", "update", "copy", "clear"} {
		if m, ok := gonjabuiltins.Methods.Dict.Get(name); ok {
			dict[name] = m
		}
	}
	// gonja hands dictionary methods a copy of the map with its keys
	// sorted; these walk the template's own map, in its recorded order, so
	// that Mistral's "for key, val in tool.items()" lists a tool as given.
	dict["keys"] = func(_ map[string]any, self *exec.Value, _ *exec.VarArgs) (any, error) {
		_, keys := orderedMap(self)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	}
	dict["values"] = func(_ map[string]any, self *exec.Value, _ *exec.VarArgs) (any, error) {
		m, keys := orderedMap(self)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = m[k]
		}
		return out, nil
	}
	dict["items"] = func(_ map[string]any, self *exec.Value, _ *exec.VarArgs) (any, error) {
		m, keys := orderedMap(self)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = []any{k, m[k]}
		}
		return out, nil
	}
	env.Methods.Dict = exec.NewMethodSet(dict)
	return &env
}

// orderedMap is the map self holds and its keys in recorded order (sorted
// for maps Render did not build); nil for anything else.
func orderedMap(self *exec.Value) (map[string]any, []string) {
	m, _ := self.Interface().(map[string]any)
	return m, keyOrder(m, false)
}

// strMethodNames are the string methods gonja defines (its set cannot be
// listed), carried into pyEnvironment's set.
var strMethodNames = []string{"capitalize", "capwords", "casefold", "center", "count", "encode", "endswith", "expandtabs",
	"find", "format", "format_map", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "islower", "isnumeric",
	"isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "partition", "removeprefix",
	"removesuffix", "replace", "rfind", "rjust", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith",
	"strip", "swapcase", "title", "upper", "zfill"}

// pyStrip is Python's lstrip/rstrip: without an argument (or with None)
// whitespace goes, else every character of the argument.
func pyStrip(self string, args *exec.VarArgs, space func(string, func(rune) bool) string, chars func(string, string) string) string {
	if len(args.Args) == 0 || args.Args[0].IsNil() {
		return space(self, unicode.IsSpace)
	}
	return chars(self, args.Args[0].String())
}

// errReplaceArgs is str.replace called without old and new.
var errReplaceArgs = errors.New("replace() takes at least 2 arguments")

// pyReplace is Python's str.replace(old, new[, count]); a negative or
// missing count replaces every occurrence.
func pyReplace(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
	if len(args.Args) < 2 {
		return nil, exec.ErrInvalidCall(errReplaceArgs)
	}
	count := -1
	if len(args.Args) > 2 && args.Args[2].IsInteger() {
		count = args.Args[2].Integer()
	}
	if c, ok := args.KwArgs["count"]; ok && c.IsInteger() {
		count = c.Integer()
	}
	return strings.Replace(self, args.Args[0].String(), args.Args[1].String(), count), nil
}

// fixNegativeIndexes rewrites every x[-k] with a constant k in a parsed
// template into x[(x | length) + -k], which gonja evaluates as Python
// does for k up to len(x) (its own x[-k] is empty when k == len(x)). The
// subscripts sit in control structures' unexported fields too, so the walk
// reads them by reflection and changes each subscript through its pointer,
// typed from reflect's unsafe pointer; it never writes outside a GetItem.
func fixNegativeIndexes(root *nodes.Template) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type() == tokenType || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.Type() == getItemType {
				negateIndex((*nodes.GetItem)(v.UnsafePointer()))
			}
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(root))
}

var (
	getItemType = reflect.TypeFor[*nodes.GetItem]()
	tokenType   = reflect.TypeFor[*tokens.Token]()
)

// negateIndex rewrites g when its subscript is a negative integer constant.
func negateIndex(g *nodes.GetItem) {
	u, ok := g.Arg.(*nodes.UnaryExpression)
	if !ok || !u.Negative {
		return
	}
	if _, ok := u.Term.(*nodes.Integer); !ok || u.Operator == nil {
		return
	}
	length := &nodes.FilteredExpression{Expression: g.Node, Filters: []*nodes.FilterCall{{Token: u.Operator, Name: "length"}}}
	plus := &nodes.BinOperator{Token: &tokens.Token{Type: tokens.Addition, Val: "+", Pos: u.Operator.Pos, Line: u.Operator.Line, Col: u.Operator.Col}}
	g.Arg = &nodes.BinaryExpression{Left: length, Right: u, Operator: plus}
}

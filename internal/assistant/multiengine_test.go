package assistant

import (
	"context"
	"testing"
)

type namedEngine struct {
	name   string
	models []string
}

func (n namedEngine) Models(context.Context) ([]ModelInfo, error) {
	var out []ModelInfo
	for _, m := range n.models {
		out = append(out, ModelInfo{Name: m, OwnedBy: n.name})
	}
	return out, nil
}
func (n namedEngine) CountTokens(context.Context, string, string) (int, error) {
	return len(n.name), nil
}
func (n namedEngine) Generate(context.Context, GenerateRequest, func(Delta) error) (Result, error) {
	return Result{Choices: []Choice{{Text: n.name}}}, nil
}

func TestMultiEngine(t *testing.T) {
	m := &MultiEngine{Default: namedEngine{"local", []string{"a", "b"}}, Routes: map[string]Engine{"b": namedEngine{"up", []string{"b"}}}}
	for _, tc := range []struct{ model, want string }{{"a", "local"}, {"b", "up"}, {"zz", "local"}} {
		r, _ := m.Generate(context.Background(), GenerateRequest{Model: tc.model}, nil)
		if r.Choices[0].Text != tc.want {
			t.Errorf("%s routed to %s, want %s", tc.model, r.Choices[0].Text, tc.want)
		}
	}
	ms, _ := m.Models(context.Background())
	if len(ms) != 2 || ms[0].OwnedBy != "local" || ms[1].OwnedBy != "up" {
		t.Fatalf("models %+v", ms)
	}
}

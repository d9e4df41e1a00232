package main

import (
	"net/http"
	"testing"

	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// componentAnswer holds an answer with no operation of its own (a 404 of an
// unknown path, a 405 of a wrong method) to the contract's component
// response name: its status, its Allow (allow empty: none), the headers
// the component requires, and the Allow declared when one is sent. It
// returns the component, whose body each API checks in its own envelope.
func (c *contractSpec) componentAnswer(t *testing.T, name string, status int, allow string, resp *http.Response, raw []byte) *v3.Response {
	t.Helper()
	r := c.model.Model.Components.Responses.GetOrZero(name)
	if r == nil {
		t.Fatalf("the contract has no %s response", name)
	}
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, status, raw)
	}
	if got := resp.Header.Values("Allow"); allow != "" && (len(got) != 1 || got[0] != allow) || allow == "" && len(got) != 0 {
		t.Errorf("Allow %q, want %q", got, allow)
	}
	if r.Headers != nil {
		for h, def := range r.Headers.FromOldest() {
			if def.Required && resp.Header.Get(h) == "" {
				t.Errorf("no %s, which %s requires", h, name)
			}
		}
	}
	if allow != "" && (r.Headers == nil || r.Headers.GetOrZero("Allow") == nil) {
		t.Errorf("%s does not declare the Allow the server sends", name)
	}
	return r
}

package upstream

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"partnerapi/internal/assistant"
)

// TestOwnerOutlivesAnOutage holds that a served model keeps the owner its
// server's list named while the server is down: the model stays listed
// then (assistant.MultiEngine lists a routed model from ModelInfo when its
// engine cannot list it), and a client comparing model lists saw its
// owned_by turn into "upstream" and back with the server's reachability.
func TestOwnerOutlivesAnOutage(t *testing.T) {
	var down atomic.Bool
	e := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":"m","owned_by":"llamacpp"}]}`)
	})
	if got := e.ModelInfo("m").OwnedBy; got != "upstream" {
		t.Fatalf("before any list: owned_by %q, want the configured upstream", got)
	}
	if ms, err := e.Models(context.Background()); err != nil || len(ms) != 1 || ms[0].OwnedBy != "llamacpp" {
		t.Fatalf("list %+v, %v", ms, err)
	}
	down.Store(true)
	e.forget() // what a failed chat or probe does
	if _, err := e.Models(context.Background()); err == nil {
		t.Fatal("a down server listed its models")
	}
	if got := e.ModelInfo("m").OwnedBy; got != "llamacpp" {
		t.Fatalf("while down: owned_by %q, want the llamacpp its list named", got)
	}
	multi := &assistant.MultiEngine{Routes: map[string]assistant.Engine{"m": e}}
	ms, err := multi.ModelsOf(context.Background(), "m")
	if err != nil || len(ms) != 1 || ms[0].OwnedBy != "llamacpp" {
		t.Fatalf("routed model while its server is down: %+v, %v; want owned_by llamacpp", ms, err)
	}
}

// TestPoolOwnerFromAnyReplica holds that a pool whose first replica was
// never reached still names the owner another replica's list gave.
func TestPoolOwnerFromAnyReplica(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	p := testPool(t, PoolOptions{}, a, b)
	p.replicas[1].engine.mu.Lock()
	p.replicas[1].engine.ownedBy = map[string]string{"m": "vllm"}
	p.replicas[1].engine.mu.Unlock()
	if got := p.ModelInfo("m").OwnedBy; got != "vllm" {
		t.Fatalf("owned_by %q, want replica b's vllm", got)
	}
}

package chatgrpc_test

import (
	"context"
	"slices"
	"testing"

	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"partnerapi/internal/assistant/chatgrpc"
)

// TestReflection: generic tools (grpcurl) can list our services without
// the .proto and without a token.
func TestReflection(t *testing.T) {
	e := start(t, fakeEngine{}, chatgrpc.Config{})
	st, err := rpb.NewServerReflectionClient(e.conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"gigachat.v1.ChatService", "gigachat.v1.ModelsService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
}

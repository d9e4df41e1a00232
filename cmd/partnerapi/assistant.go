package main

import (
	"context"
	"errors"
	"flag"

	"partnerapi/api"
	"partnerapi/internal/assistant/chatapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// assistantModule wires the assistant API.
type assistantModule struct{}

func (*assistantModule) name() string        { return "assistant" }
func (*assistantModule) defaultAddr() string { return "127.0.0.1:9444" }

func (*assistantModule) registerFlags(fs *flag.FlagSet) {}

func (*assistantModule) migrate(ctx context.Context, db *sqldb.DB) error { return nil }

func (*assistantModule) build(ctx context.Context, d deps) (built, error) {
	mux := chatapi.NewServer(chatapi.Deps{Metrics: d.metrics})
	return built{api: web.API{
		Name:    "assistant",
		Handler: mux,
		Errors:  chatapi.ErrorWriter(),
		Health:  d.db.Ping,
		OpenAPI: api.Spec("assistant"),
	}}, nil
}

// runAssistant is `partnerapi assistant ...`: provisioning commands.
func runAssistant(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	return errors.New("assistant: no provisioning commands yet")
}

// runModels is `partnerapi models ...`: the models directory.
func runModels(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	return errors.New("models: no commands yet")
}

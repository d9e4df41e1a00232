package main

import (
	"context"
	"errors"
	"flag"

	"partnerapi/api"
	"partnerapi/internal/smarthome/homeapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// smarthomeModule wires the smart-home API.
type smarthomeModule struct{}

func (*smarthomeModule) name() string        { return "smarthome" }
func (*smarthomeModule) defaultAddr() string { return "127.0.0.1:9445" }

func (*smarthomeModule) registerFlags(fs *flag.FlagSet) {}

func (*smarthomeModule) migrate(ctx context.Context, db *sqldb.DB) error { return nil }

func (*smarthomeModule) build(ctx context.Context, d deps) (built, error) {
	mux := homeapi.NewServer(homeapi.Deps{Metrics: d.metrics})
	return built{api: web.API{
		Name:    "smarthome",
		Handler: mux,
		Errors:  homeapi.ErrorWriter(),
		Health:  d.db.Ping,
		OpenAPI: api.Spec("smarthome"),
		Prepare: homeapi.FoldSlashes,
	}}, nil
}

// runSmarthome is `partnerapi smarthome ...`: provisioning commands.
func runSmarthome(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	return errors.New("smarthome: no provisioning commands yet")
}

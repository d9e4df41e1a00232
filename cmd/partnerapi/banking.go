package main

import (
	"context"
	"errors"
	"flag"

	"partnerapi/api"
	"partnerapi/internal/banking/bankapi"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// bankingModule wires the banking API.
type bankingModule struct{}

func (*bankingModule) name() string        { return "banking" }
func (*bankingModule) defaultAddr() string { return "127.0.0.1:9443" }

func (*bankingModule) registerFlags(fs *flag.FlagSet) {}

func (*bankingModule) migrate(ctx context.Context, db *sqldb.DB) error { return nil }

func (*bankingModule) build(ctx context.Context, d deps) (built, error) {
	mux := bankapi.NewServer(bankapi.Deps{Metrics: d.metrics, Log: d.log})
	return built{api: web.API{
		Name:    "banking",
		Handler: mux,
		Errors:  bankapi.ErrorWriter(),
		Health:  d.db.Ping,
		OpenAPI: api.Spec("banking"),
	}}, nil
}

// runBanking is `partnerapi banking ...`: provisioning commands.
func runBanking(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	return errors.New("banking: no provisioning commands yet")
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"partnerapi/api"
	"partnerapi/internal/smarthome"
	"partnerapi/internal/smarthome/homeapi"
	"partnerapi/internal/smarthome/homesql"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// smarthomeModule wires the smart-home API.
type smarthomeModule struct {
	omitFalseRequired bool
	hideAllowed       bool
	profile           string
	ranges            string        // file of smarthome.Ranges
	opaque            string        // smarthome.ParseOpaqueCredentials
	mqtt              smarthomeMQTT // smarthome_mqtt.go
}

func (*smarthomeModule) name() string        { return "smarthome" }
func (*smarthomeModule) defaultAddr() string { return "127.0.0.1:9445" }

func (m *smarthomeModule) registerFlags(fs *flag.FlagSet) {
	fs.BoolVar(&m.omitFalseRequired, "smarthome-omit-false-required", false, "leave required out of non-required features instead of emitting false")
	fs.BoolVar(&m.hideAllowed, "smarthome-hide-allowed-values", false, "do not emit allowed_values in models")
	fs.StringVar(&m.profile, "smarthome-profile", "", "category profile: empty for all 29, 2025-11 for the provider's list without sensor_air")
	fs.StringVar(&m.ranges, "smarthome-ranges", "", `JSON file replacing numeric features' default ranges, {"current": {"min": 0, "max": 50000, "step": 1}, ...} (several are a third party's transcription; empty: the catalog's)`)
	fs.StringVar(&m.opaque, "smarthome-opaque-credentials", "", `agents' opaque credentials, sent as "Authorization: Basic CRED" instead of Base64 login:password: comma-separated LOGIN=sha256:HEX, HEX the SHA-256 of CRED (printf %s "$CRED" | sha256sum); LOGIN is an agent (smarthome agent create), whose deletion ends it`)
	m.mqtt.registerFlags(fs)
}

// smarthomeProfiles are the categories each profile hides.
var smarthomeProfiles = map[string][]string{"": nil, "2026": nil, "2025-11": {"sensor_air"}}

func (*smarthomeModule) migrate(ctx context.Context, db *sqldb.DB) error {
	return homesql.Migrate(ctx, db)
}

func (m *smarthomeModule) build(ctx context.Context, d deps) (built, error) {
	hide, ok := smarthomeProfiles[m.profile]
	if !ok {
		return built{}, fmt.Errorf("--smarthome-profile: unknown profile %q (want 2025-11 or empty)", m.profile)
	}
	svc := smarthome.NewService(homesql.New(d.db))
	svc.Restrict(hide)
	if m.ranges != "" {
		r, err := loadRanges(m.ranges)
		if err != nil {
			return built{}, fmt.Errorf("--smarthome-ranges: %w", err)
		}
		svc.SetRanges(r)
	}
	opaque, err := smarthome.ParseOpaqueCredentials(m.opaque)
	if err != nil {
		return built{}, fmt.Errorf("--smarthome-opaque-credentials: %w", err)
	}
	svc.SetOpaqueCredentials(opaque)
	// First start seeds the catalog; later starts keep what admins changed.
	if err := svc.Init(ctx); err != nil {
		return built{}, err
	}
	var ref gateRef
	gate, err := m.mqtt.sidecar(svc, &ref, d)
	if err != nil {
		return built{}, err
	}
	var sidecars []sidecar
	// Without the gate the API has no Commander (an untyped nil, not a nil
	// *gateRef): commands are then a feature this deployment does not
	// offer, not one that is away for the moment.
	var cmd smarthome.Commander
	if gate != nil {
		sidecars = append(sidecars, *gate)
		cmd = &ref
	}
	mux := homeapi.NewServer(homeapi.Deps{Metrics: d.metrics, Log: d.log, Service: svc, Commander: cmd, Options: homeapi.Options{
		OmitFalseRequired: m.omitFalseRequired, HideAllowedValues: m.hideAllowed, Profile: m.profile}})
	return built{api: web.API{
		Name:    "smarthome",
		Handler: mux,
		Errors:  homeapi.ErrorWriter(),
		Health:  d.db.Ping,
		OpenAPI: api.Spec("smarthome"),
		Prepare: homeapi.FoldSlashes,
	}, sidecars: sidecars}, nil
}

// loadRanges reads a --smarthome-ranges file and checks it against the
// built-in catalog, whose features every store has (admins change models,
// not features), so that a typo stops serve instead of being ignored.
func loadRanges(path string) (smarthome.Ranges, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := smarthome.ParseRanges(b)
	if err != nil {
		return nil, err
	}
	seed, err := smarthome.Seed()
	if err != nil {
		return nil, err
	}
	return r, seed.CheckRanges(r)
}

const smarthomeUsage = `usage:
  partnerapi smarthome agent create --login LOGIN [--password P]   issue an agent's Basic credentials (prints JSON)
  partnerapi smarthome agent rotate --login LOGIN   give an agent a new password (prints JSON)
  partnerapi smarthome agent delete --login LOGIN   delete an agent
  partnerapi smarthome admin create|rotate|delete --login LOGIN [--password P]   the same for catalog administrators
  partnerapi smarthome model list                   print the catalog's models
  partnerapi smarthome model put [--file F]         create or replace a model (JSON from F or stdin)
  partnerapi smarthome model delete --id ID         delete a model
every command above takes --data-dir / --database-url
` + smarthomeAppUsage

// runSmarthome is `partnerapi smarthome ...`: provisioning commands.
func runSmarthome(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	if len(args) < 2 {
		return errors.New(smarthomeUsage)
	}
	if handled, err := runSmarthomeAppChange(ctx, args, getenv, io); handled {
		return err
	}
	what, verb := args[0], args[1]
	fs := flag.NewFlagSet("smarthome "+what+" "+verb, flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	login := fs.String("login", "", "login of the new credential")
	file := fs.String("file", "", "model JSON file (default stdin)")
	id := fs.String("id", "", "model id")
	// A team's CI configuration holds its agent's credentials as it holds
	// the provider's; a fresh server's agent takes them with --password.
	password := fs.String("password", "", "create: the password, 32-128 characters of A-Z a-z 0-9 _ - (default: a new random one; PARTNERAPI_PASSWORD keeps it out of the process list)")
	if err := parseFlags(fs, args[2:], getenv); err != nil {
		return err
	}
	if *password != "" && verb != "create" {
		return errors.New("--password: only create takes it")
	}
	db, err := store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	if err := homesql.Migrate(ctx, db); err != nil {
		return err
	}
	svc := smarthome.NewService(homesql.New(db))
	if err := svc.Init(ctx); err != nil {
		return err
	}
	out := json.NewEncoder(io.out)
	out.SetEscapeHTML(false)
	switch what + " " + verb {
	case "agent create", "admin create":
		if *login == "" {
			return errors.New("--login is required")
		}
		create := svc.CreateCredential
		if *password != "" && !smarthome.ChosenPasswordValid(*password) {
			return errors.New("--password must be 32-128 characters of A-Z a-z 0-9 _ - (e.g. openssl rand -hex 16)")
		} else if *password != "" {
			create = func(ctx context.Context, kind, login string) (string, error) {
				return svc.CreateCredentialWith(ctx, kind, login, *password)
			}
		}
		pw, err := create(ctx, what, *login)
		if err != nil {
			return cliError("login", err)
		}
		return out.Encode(map[string]string{"login": *login, "password": pw})
	case "agent rotate", "admin rotate":
		if *login == "" {
			return errors.New("--login is required")
		}
		pw, err := svc.RotateCredential(ctx, what, *login)
		if err != nil {
			return cliError("login", err)
		}
		return out.Encode(map[string]string{"login": *login, "password": pw})
	case "agent delete", "admin delete":
		if *login == "" {
			return errors.New("--login is required")
		}
		if err := svc.DeleteCredential(ctx, what, *login); err != nil {
			return cliError("login", err)
		}
		return out.Encode(map[string]any{"login": *login, "deleted": true})
	case "model list":
		c, err := svc.Catalog(ctx)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"version": c.Version, "models": c.Models})
	case "model put":
		b, err := readModelInput(*file, io.in)
		if err != nil {
			return err
		}
		m, err := decodeModelInput(b)
		if err != nil {
			return fmt.Errorf("model JSON: %w", err)
		}
		created, v, err := svc.PutModel(ctx, m)
		if err != nil {
			return cliError("model", err)
		}
		return out.Encode(map[string]any{"id": m.ID, "created": created, "version": v})
	case "model delete":
		if *id == "" {
			return errors.New("--id is required")
		}
		v, err := svc.DeleteModel(ctx, *id)
		if err != nil {
			return cliError("model", err)
		}
		return out.Encode(map[string]any{"id": *id, "deleted": true, "version": v})
	}
	return errors.New(smarthomeUsage)
}

func readModelInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// decodeModelInput reads one model as PUT /v1/admin/models/{id} does:
// a member the model does not have is refused, not dropped, so that a
// misspelt "allowed_value" or "dependency" does not store a model without
// its range or dependency while the command reports success; nothing may
// follow the object.
func decodeModelInput(b []byte) (smarthome.Model, error) {
	var m smarthome.Model
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return m, errors.New("data after the object")
	}
	return m, nil
}

// cliError prints the findings about what the command was given (a model,
// or a credential's login) one after another, separated so that a reader
// sees where each ends: %v of the list ran them together. what names the
// input, so that a refused login is not reported as an invalid model.
func cliError(what string, err error) error {
	var inv *smarthome.InvalidError
	if errors.As(err, &inv) {
		return fmt.Errorf("invalid %s: %s", what, strings.Join(inv.Details, "; "))
	}
	return err
}

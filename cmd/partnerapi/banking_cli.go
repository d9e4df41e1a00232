package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/gost"
)

const bankingUsage = `usage: partnerapi banking COMMAND [flags]
  token --scope "PAY_DOC_RU ..." [--org ORG] [--user USER] [--client CLIENT_ID]   (scopes of reference §2 only)
  org create --name N --inn INN [--kpp KPP] [--ogrn OGRN] [--full-name N] [--address A] [--ter-bank NAME]
  account add --org ORG --number 20DIGITS --bic BIC [--corr CORR] [--status OPEN] [--close-date YYYY-MM-DD]
  user create --org ORG --login L [--name N] [--email E] [--phone +7…] [--password P] [--executive] [--signing-method Token|OneTimePassword]
  user signing-method --user USER --signing-method Token|OneTimePassword
  cert add --user USER --cert FILE [--role SOLE|FIRST|SECOND|QUALIFIED] [--type SMS] [--uuid UUID]
  cert list --user USER | --org ORG   (each certificate's uuid, role, type, active, activeNow, issuer, serial and validity)
  cert deactivate --uuid UUID | cert activate --uuid UUID   (whether signatures made with it are taken from now on)
  app create --name N --redirect-uri URI [--client-id ID] [--client-secret S] [--scopes "openid PAY_DOC_RU ..."] [--banking-client-secret-days 40]
  app scopes --client CLIENT_ID --scopes "openid PAY_DOC_RU ..."   (the scopes authorize grants the app; "": unrestricted)
  app secret --client CLIENT_ID [--client-secret S] [--banking-client-secret-days 40]   (new client_secret, e.g. for the sandbox app; 0 days: never expires)
  offer sign --client CLIENT_ID --account NUMBER
  sign --cert C --key K [--uuid CERT_UUID] [--trim-final-newline] < digest.txt
  jws-certificate [--banking-jws-key FILE]   (the bank's certificate verifying its JWS answers and id_tokens, PEM)
  id-token-key [--banking-id-token-rsa-key FILE]   (the public key verifying RS256 id_tokens, PEM)
  keys adopt [--banking-jws-key FILE] [--banking-id-token-alg RS256 --banking-id-token-rsa-key FILE] [--banking-webhook-key K]   (records the present keys as the deployment's, after replacing one on purpose)
  card add|list|set-status|limit-setting, clock advance DURATION   (sandbox cards; 'partnerapi banking card' for their flags)
  webhook set|show|deliveries|reseal   (partners' webhook settings; 'partnerapi banking webhook' for their flags)
  cert-request activate --org ORG --external-id ID [--banking-jws-key FILE]   (the bank's activation of a certificate request, in any contour)
  payment delete --org ORG --external-id ID [--comment TEXT]   (a bank user deleting a draft in the bank's UI: CREATED, CHECKERROR or PARTSIGNED → DELETED, with its webhook)
  payment edit --org ORG --external-id ID --file DOC.json   (a bank user correcting a CHECKERROR document in the bank's UI: → CREATED, or CHECKERROR again if it still fails)`

// bankingCmd is one provisioning command: its flags and what it does with
// the opened identity service.
type bankingCmd struct {
	flags func(fs *flag.FlagSet)
	run   func(ctx context.Context, id *banking.Identity) (any, error)
	// withStore, when set, runs in place of run for a command that needs
	// the store's flags too (the data directory of the bank's key).
	withStore func(ctx context.Context, id *banking.Identity, store storeConfig) (any, error)
	// withPayments, when set, runs in place of run for a command on
	// payment documents, with the payment store on the same database.
	withPayments func(ctx context.Context, id *banking.Identity, payments banking.PaymentStore) (any, error)
	noDB         bool
}

func runBankingCLI(ctx context.Context, args []string, getenv func(string) string, sio stdio) error {
	name := ""
	rest := args
	switch {
	case len(args) >= 1 && (args[0] == "token" || args[0] == "sign"):
		name, rest = args[0], args[1:]
	case len(args) >= 2:
		name, rest = args[0]+" "+args[1], args[2:]
	}
	mk, ok := bankingCommands[name]
	if !ok {
		return errors.New(bankingUsage)
	}
	cmd := mk(sio)
	fs := flag.NewFlagSet("banking "+name, flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	contour := fs.String("banking-contour", banking.ContourSandbox, "banking contour: sandbox, test or production")
	cmd.flags(fs)
	if err := parseFlags(fs, rest, getenv); err != nil {
		return err
	}
	if !banking.ValidContour(*contour) {
		return fmt.Errorf("--banking-contour must be sandbox, test or production, got %q", *contour)
	}
	var id *banking.Identity
	var payments banking.PaymentStore
	if !cmd.noDB {
		db, err := store.open(ctx)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		defer db.Close()
		if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
			return err
		}
		id = banking.NewIdentity(bankingsql.NewIdentityStore(db))
		if cmd.withPayments != nil {
			if err := bankingsql.MigratePayments(ctx, db); err != nil {
				return err
			}
			payments = bankingsql.NewPaymentStore(db)
		}
		if *contour == banking.ContourSandbox {
			if err := id.SeedSandbox(ctx); err != nil {
				return err
			}
		}
	}
	var out any
	var err error
	switch {
	case cmd.withStore != nil:
		out, err = cmd.withStore(ctx, id, store)
	case cmd.withPayments != nil:
		out, err = cmd.withPayments(ctx, id, payments)
	default:
		out, err = cmd.run(ctx, id)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(sio.out).Encode(out)
}

var bankingCommands = map[string]func(sio stdio) bankingCmd{
	"keys adopt": bankingKeysAdopt, // banking_key_check.go
	"token": func(stdio) bankingCmd {
		var scope, org, user, client string
		var ttl time.Duration
		return bankingCmd{
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&scope, "scope", "", "space-separated scopes")
				fs.DurationVar(&ttl, "access-token-ttl", banking.AccessTokenTTL, "the access token's lifetime, as serve's --banking-access-token-ttl gives those of the token endpoint (whole seconds from 1s to 24h)")
				fs.StringVar(&org, "org", banking.SandboxOrgID, "organisation id")
				fs.StringVar(&user, "user", "", "user id or login (default: the organisation's first user)")
				fs.StringVar(&client, "client", banking.SandboxClientID, "partner client_id")
			},
			run: func(ctx context.Context, id *banking.Identity) (any, error) {
				scopes := banking.ParseScopes(scope)
				if len(scopes) == 0 {
					return nil, errors.New("--scope is required")
				}
				if err := checkTokenTTL("--access-token-ttl", ttl); err != nil {
					return nil, err
				}
				id.AccessTTL = ttl
				// A token's scopes only open this API's operations, so a
				// misspelt one would give a token every call refuses with
				// 403 and no hint why.
				if bad := banking.UnknownScopes(scopes); len(bad) > 0 {
					return nil, fmt.Errorf("--scope: unknown scope %s; known scopes: %s", strings.Join(bad, " "), strings.Join(banking.Scopes, " "))
				}
				if _, err := id.Store.GetOrg(ctx, org); err != nil {
					return nil, flagNotFound("--org", org, "organisation", err)
				}
				app, err := id.Store.GetApp(ctx, client)
				if err != nil {
					return nil, flagNotFound("--client", client, "partner application", err)
				}
				// A token the app could not get through authorize would let a
				// test pass that fails against the bank.
				if out := app.ScopesOutside(scopes); len(out) > 0 {
					return nil, fmt.Errorf("--client %s is not registered for scope %s: see `banking app scopes`", client, strings.Join(out, " "))
				}
				if user == "" {
					users, err := id.Store.ListUsers(ctx, org)
					if err != nil {
						return nil, err
					}
					if len(users) == 0 {
						return nil, fmt.Errorf("organisation %s has no users: create one with `banking user create`", org)
					}
					user = users[0].ID
				} else if u, err := lookupUser(ctx, id.Store, user); err != nil || u.OrgID != org {
					return nil, fmt.Errorf("--user %s is not a user of organisation %s", user, org)
				} else {
					user = u.ID
				}
				p, err := id.IssueTokens(ctx, client, org, user, scopes)
				if err != nil {
					return nil, err
				}
				return struct {
					AccessToken  string `json:"access_token"`
					RefreshToken string `json:"refresh_token"`
					ExpiresIn    int    `json:"expires_in"`
					Scope        string `json:"scope"`
				}{p.AccessToken, p.RefreshToken, p.ExpiresIn, p.Scope}, nil
			},
		}
	},
	"org create": func(stdio) bankingCmd {
		var o banking.Organisation
		return bankingCmd{
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&o.ID, "id", "", "organisation id (default: a new uuid)")
				fs.StringVar(&o.Name, "name", "", "short name")
				fs.StringVar(&o.FullName, "full-name", "", "full name (default: --name)")
				fs.StringVar(&o.INN, "inn", "", "INN (10 or 12 digits)")
				fs.StringVar(&o.KPP, "kpp", "", "KPP (9 digits)")
				fs.StringVar(&o.OGRN, "ogrn", "", "OGRN (13 or 15 digits)")
				fs.StringVar(&o.JuridicalAddress, "address", "", "registered address (user-info's orgJuridicalAddress)")
				fs.StringVar(&o.TerBank, "ter-bank", "", "territorial bank serving it (user-info's terBank); empty: the territorial bank of its accounts' BIC, else empty")
			},
			run: func(ctx context.Context, id *banking.Identity) (any, error) {
				// The model's own message names its fields in Russian, not
				// the flags that were left out.
				if o.Name == "" || o.INN == "" {
					return nil, errors.New("--name and --inn are required")
				}
				if o.ID == "" {
					o.ID = banking.NewUUID()
				}
				if o.FullName == "" {
					o.FullName = o.Name
				}
				if err := o.Validate(); err != nil {
					return nil, cliErr(err)
				}
				if err := id.Store.CreateOrg(ctx, o); err != nil {
					return nil, err
				}
				return map[string]string{"id": o.ID}, nil
			},
		}
	},
	"account add": func(stdio) bankingCmd {
		a := banking.Account{Currency: "810", Status: banking.AccountOpen}
		return bankingCmd{
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&a.OrgID, "org", "", "organisation id")
				fs.StringVar(&a.Number, "number", "", "account number (20 digits)")
				fs.StringVar(&a.BIC, "bic", "", "BIC of the bank (9 digits opening with 04, a credit institution's)")
				fs.StringVar(&a.CorrAccount, "corr", "", "correspondent account (20 digits)")
				fs.StringVar(&a.Currency, "currency", "810", "ISO numeric currency code")
				fs.StringVar(&a.Name, "name", "Расчётный счёт", "account name")
				fs.StringVar(&a.Status, "status", banking.AccountOpen, "OPEN, BLOCKED or CLOSED")
				fs.StringVar(&a.OpenDate, "open-date", "2024-01-01", "opening date YYYY-MM-DD")
				fs.StringVar(&a.CloseDate, "close-date", "", "closing date YYYY-MM-DD of a CLOSED account, client-info's closeDate; empty: not known (null)")
			},
			run: func(ctx context.Context, id *banking.Identity) (any, error) {
				if a.OrgID == "" || a.Number == "" || a.BIC == "" {
					return nil, errors.New("--org, --number and --bic are required")
				}
				if err := a.Validate(); err != nil {
					return nil, cliErr(err)
				}
				if err := id.Store.AddAccount(ctx, a); errors.Is(err, banking.ErrNotFound) {
					return nil, fmt.Errorf("--org %s: no such organisation", a.OrgID)
				} else if errors.Is(err, banking.ErrDuplicate) {
					// The store's "account: banking: already exists"
					// names neither the flag nor the value.
					return nil, fmt.Errorf("--number %s: the account is already registered", a.Number)
				} else if err != nil {
					return nil, err
				}
				return map[string]string{"number": a.Number, "org": a.OrgID}, nil
			},
		}
	},
	"user create": func(stdio) bankingCmd {
		var u banking.User
		var password string
		return bankingCmd{
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&u.OrgID, "org", "", "organisation id")
				fs.StringVar(&u.Login, "login", "", "login for the OAuth login page")
				fs.StringVar(&u.Name, "name", "", "full name")
				fs.StringVar(&u.Email, "email", "", "e-mail")
				fs.StringVar(&u.Phone, "phone", "", "phone number in international form, +7… (user-info's phone_number)")
				fs.StringVar(&password, "password", "", "password (stored hashed); empty: no interactive login")
				fs.BoolVar(&u.Executive, "executive", false, "the user is the organisation's sole executive body, its director (user-info's individualExecutiveAgency 1)")
				fs.StringVar(&u.SigningMethod, "signing-method", banking.SigningToken, "signing tool type: Token (a certificate key) or OneTimePassword (only these users may confirm payments by QR outside the sandbox)")
			},
			run: func(ctx context.Context, id *banking.Identity) (any, error) {
				if u.OrgID == "" || u.Login == "" {
					return nil, errors.New("--org and --login are required")
				}
				if u.Phone != "" && !banking.ValidPhone(u.Phone) {
					return nil, fmt.Errorf("--phone must be + and 10 to 15 digits, got %q", u.Phone)
				}
				if !banking.ValidSigningMethod(u.SigningMethod) {
					return nil, fmt.Errorf("--signing-method must be Token or OneTimePassword, got %q", u.SigningMethod)
				}
				u.ID = banking.NewUUID()
				if password != "" {
					h, err := banking.HashPassword(password)
					if err != nil {
						return nil, err
					}
					u.PasswordHash = h
				}
				if err := id.Store.CreateUser(ctx, u); errors.Is(err, banking.ErrDuplicate) {
					// Logins are unique across organisations (the login
					// form asks for the login alone).
					return nil, fmt.Errorf("--login %s: a user with this login already exists", u.Login)
				} else if err != nil {
					return nil, err
				}
				return map[string]string{"id": u.ID}, nil
			},
		}
	},
	"user signing-method": func(stdio) bankingCmd {
		var user, method string
		return bankingCmd{
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&user, "user", "", "user id or login")
				fs.StringVar(&method, "signing-method", "", "signing tool type: Token or OneTimePassword")
			},
			run: func(ctx context.Context, id *banking.Identity) (any, error) {
				if user == "" {
					return nil, errors.New("--user is required")
				}
				if !banking.ValidSigningMethod(method) {
					return nil, fmt.Errorf("--signing-method must be Token or OneTimePassword, got %q", method)
				}
				u, err := lookupUser(ctx, id.Store, user)
				if err != nil {
					return nil, flagNotFound("--user", user, "user", err)
				}
				if err := id.Store.SetUserSigningMethod(ctx, u.ID, method); errors.Is(err, banking.ErrNotFound) {
					return nil, fmt.Errorf("--user %s: no such user", user)
				} else if err != nil {
					return nil, err
				}
				return map[string]string{"id": u.ID, "signingMethod": method}, nil
			},
		}
	},
	"cert add": func(stdio) bankingCmd {
		var user, file, role, typ, uuid string
		return bankingCmd{
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&user, "user", "", "user id or login of who owns the certificate")
				fs.StringVar(&file, "cert", "", "X.509 GOST certificate (PEM, its chain may follow it; DER or base64)")
				fs.StringVar(&role, "role", string(banking.RoleSoleAuthority), "SOLE, FIRST, SECOND or QUALIFIED")
				fs.StringVar(&typ, "type", "SMS", "crypto profile type (UKEP_UL for QUALIFIED)")
				fs.StringVar(&uuid, "uuid", "", "certificate uuid (default: a new uuid)")
			},
			run: func(ctx context.Context, id *banking.Identity) (any, error) {
				if user == "" || file == "" {
					return nil, errors.New("--user and --cert are required")
				}
				raw, err := os.ReadFile(file)
				if err != nil {
					return nil, fmt.Errorf("--cert: %w", err)
				}
				cert, err := gost.ParseCertificate(raw)
				if err != nil {
					return nil, fmt.Errorf("--cert: %w", err)
				}
				r := banking.SignatureRole(strings.ToUpper(role))
				switch r {
				case banking.RoleSoleAuthority, banking.RoleFirst, banking.RoleSecond:
				case banking.RoleQualified:
					typ = banking.SignTypeQualified
				default:
					return nil, fmt.Errorf("--role must be SOLE, FIRST, SECOND or QUALIFIED, got %q", role)
				}
				if uuid == "" {
					uuid = banking.NewUUID()
				}
				u, err := lookupUser(ctx, id.Store, user)
				if err != nil {
					return nil, flagNotFound("--user", user, "user", err)
				}
				c := banking.Certificate{UUID: uuid, UserID: u.ID, DER: cert.Raw, Issuer: cert.Issuer,
					Serial: cert.SerialHex, TypeName: typ, Role: r, Active: true}
				if err := id.Store.AddCertificate(ctx, c); errors.Is(err, banking.ErrNotFound) {
					return nil, fmt.Errorf("--user %s: no such user", user)
				} else if err != nil {
					return nil, err
				}
				return map[string]string{"uuid": uuid}, nil
			},
		}
	},
	"sign": func(sio stdio) bankingCmd {
		var certFile, keyFile, uuid, signType string
		var trim bool
		return bankingCmd{
			noDB: true,
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&certFile, "cert", "", "signer's GOST certificate")
				fs.StringVar(&keyFile, "key", "", "signer's GOST private key (PKCS#8 PEM or DER)")
				fs.StringVar(&uuid, "uuid", "", "certificateUuid to put in the element")
				fs.StringVar(&signType, "sign-type", "", "signType (UKEP_UL for a qualified signature)")
				fs.BoolVar(&trim, "trim-final-newline", false, "drop one final newline (a file written with echo); the digest itself has none unless the server runs with --banking-digest trailing=on, whose final separator is part of the signed text")
			},
			run: func(ctx context.Context, _ *banking.Identity) (any, error) {
				if certFile == "" || keyFile == "" {
					return nil, errors.New("--cert and --key are required")
				}
				return signDigest(sio.in, certFile, keyFile, uuid, signType, trim)
			},
		}
	},
}

// flagNotFound says that the value of a flag names no such thing, in
// those words, where the store's "banking: not found" would leave a reader
// to guess what was looked for; other errors keep the flag as context.
func flagNotFound(flag, value, what string, err error) error {
	if errors.Is(err, banking.ErrNotFound) {
		return fmt.Errorf("%s %s: no such %s", flag, value, what)
	}
	return fmt.Errorf("%s %s: %w", flag, value, err)
}

// lookupUser finds the user --user names, by id or, failing that, by
// login. `banking user create --login L` prints an id, yet the login is
// what its caller chose and remembers, so the commands taking --user take
// either. Logins are unique across organisations (the login form asks for
// the login alone) and ids are UUIDs, so one value names one user.
func lookupUser(ctx context.Context, store banking.IdentityStore, idOrLogin string) (banking.User, error) {
	u, err := store.GetUser(ctx, idOrLogin)
	if errors.Is(err, banking.ErrNotFound) {
		return store.GetUserByLogin(ctx, idOrLogin)
	}
	return u, err
}

// cliErr prints a domain validation error with its fields and, when it
// has them, the checks that failed, and any other domain error as its
// message.
func cliErr(err error) error {
	var be *banking.Error
	if errors.As(err, &be) && len(be.FieldNames) > 0 {
		if len(be.Checks) > 0 {
			return fmt.Errorf("%s: %s (%s)", be.Message, strings.Join(be.FieldNames, ", "), strings.Join(be.Checks, "; "))
		}
		return fmt.Errorf("%s: %s", be.Message, strings.Join(be.FieldNames, ", "))
	}
	// The message alone: "banking error 8: " numbers a kind that means
	// something to the API's error mapping, not to whoever runs the command.
	if errors.As(err, &be) && error(be) == err {
		return errors.New(be.Message)
	}
	return err
}

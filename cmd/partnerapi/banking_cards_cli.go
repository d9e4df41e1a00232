package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/banking/bankingsql"
	"partnerapi/internal/sqldb"
)

const bankingCardsUsage = `usage: partnerapi banking card|clock COMMAND [flags]
  card add --account NUMBER --pan PAN --holder NAME [--id ID] [--org ORG] [--bic BIC] [--expiry YYYY-MM-DD]
           [--birthday YYYY-MM-DD] [--status ACTIVE] [--embossed TEXT] [--type MIR_BUSINESS]
  card list [--org ORG] [--status S]
  card set-status --id ID --status S [--org ORG]
  card limit-setting --state on|off [--org ORG]   (the organisation's setting for card limits through the API; off: 400 WORKFLOW_FAULT)
  clock advance DURATION            (sandbox only, e.g. 36h)`

// sandboxNoOfferAccount holds sandbox cards on an account the sandbox
// partner has no offer on, so the "outside the offer" paths are reachable.
const sandboxNoOfferAccount = "40702810138833411735"

// newCards builds the card service over db for a contour, reading offers
// and JWS certificates from IDENTITY's records; jwsClients is the
// comma-separated client_ids that must sign card-limit requests with a JWS;
// zone is the bank's IANA time zone for limit expiry ("" means Europe/Moscow);
// jwsReversed reads JWS signatures byte-reversed (--banking-jws-reversed);
// digest is the layout of limit applications' digests (--banking-digest).
// In the sandbox it seeds the sandbox cards.
func newCards(ctx context.Context, db *sqldb.DB, contour string, verifier banking.SignatureVerifier, jwsClients, zone string, jwsReversed bool, digest banking.DigestFormat) (*banking.Cards, error) {
	store := bankingsql.NewCardStore(db)
	required := map[string]bool{}
	for _, c := range strings.Split(jwsClients, ",") {
		if c = strings.TrimSpace(c); c != "" {
			required[c] = true
		}
	}
	idStore := bankingsql.NewIdentityStore(db)
	cfg := banking.CardsConfig{Contour: contour, JWSRequired: func(client string) bool { return required[client] }, JWSReversed: jwsReversed, Digest: digest}
	loc, err := bankZone(zone)
	if err != nil {
		return nil, err
	}
	cfg.Location = loc
	cards, err := banking.NewCards(store, cfg, verifier, banking.IdentityJWSCertificates{Store: idStore})
	if err != nil {
		return nil, err
	}
	cards.UseOffers(idStore)
	if contour == banking.ContourSandbox {
		// Idempotent, like the identity seed.
		if err := banking.SeedSandboxCards(ctx, store, banking.SandboxOrgID, banking.SandboxClientID, banking.SandboxBIC,
			[]string{banking.SandboxAccount, banking.SandboxAccount2}, []string{sandboxNoOfferAccount}); err != nil {
			return nil, fmt.Errorf("seed sandbox cards: %w", err)
		}
	}
	return cards, nil
}

// bankZone loads --banking-time-zone, the bank's time zone of card-limit
// expiry and of every payment document date; "" is nil, which the banking
// services read as banking.DefaultBankZone.
func bankZone(zone string) (*time.Location, error) {
	if zone == "" {
		return nil, nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("--banking-time-zone: %w", err)
	}
	return loc, nil
}

// runBankingCards is `partnerapi banking card ...` and `banking clock ...`.
func runBankingCards(ctx context.Context, args []string, getenv func(string) string, sio stdio) error {
	if len(args) < 2 {
		return errors.New(bankingCardsUsage)
	}
	name, rest := args[0]+" "+args[1], args[2:]
	// The duration of `clock advance` may come before the flags.
	var positional []string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		positional, rest = rest[:1], rest[1:]
	}
	fs := flag.NewFlagSet("banking "+name, flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	contour := fs.String("banking-contour", banking.ContourSandbox, "banking contour: sandbox, test or production")
	org := fs.String("org", banking.SandboxOrgID, "organisation id")
	var c banking.Card
	var status, state string
	switch name {
	case "card add":
		fs.StringVar(&c.ID, "id", "", "card id (default: generated)")
		fs.StringVar(&c.AccountNumber, "account", "", "account number the card belongs to")
		fs.StringVar(&c.BIC, "bic", "", "bank BIC (default: the account's; another is refused)")
		fs.StringVar(&c.PAN, "pan", "", "card number (stored whole, shown masked)")
		fs.StringVar(&c.HolderName, "holder", "", "cardholder name (stored whole, shown masked)")
		fs.StringVar(&c.HolderBirthday, "birthday", "", "cardholder birthday YYYY-MM-DD")
		fs.StringVar(&c.ExpiryDate, "expiry", "", "expiry date YYYY-MM-DD")
		fs.StringVar(&status, "status", string(banking.CardActive), "card status")
		fs.StringVar(&c.EmbossedText, "embossed", "", "embossed text")
		fs.StringVar(&c.CardType, "type", "MIR_BUSINESS", "card type")
	case "card list":
		fs.StringVar(&status, "status", "", "only cards with this status")
	case "card set-status":
		fs.StringVar(&c.ID, "id", "", "card id")
		fs.StringVar(&status, "status", "", "new status")
	case "card limit-setting":
		fs.StringVar(&state, "state", "", "on or off")
	case "clock advance":
	default:
		return errors.New(bankingCardsUsage)
	}
	if err := parseFlags(fs, rest, getenv); err != nil {
		return err
	}
	if name != "clock advance" && (len(positional) > 0 || fs.NArg() > 0) {
		return fmt.Errorf("banking %s: unexpected arguments\n%s", name, bankingCardsUsage)
	}
	if name == "card limit-setting" && state != "on" && state != "off" {
		return fmt.Errorf("--state %q: want on or off", state)
	}
	if !banking.ValidContour(*contour) {
		return fmt.Errorf("--banking-contour must be sandbox, test or production, got %q", *contour)
	}
	st := banking.CardStatus(status)
	if status != "" && !st.Valid() {
		return fmt.Errorf("--status %q: want one of %v", status, banking.CardStatuses)
	}
	db, err := store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	if err := bankingsql.MigrateIdentity(ctx, db); err != nil {
		return err
	}
	if err := bankingsql.MigrateCards(ctx, db); err != nil {
		return err
	}
	cards, err := newCards(ctx, db, *contour, nil, "", "", false, banking.DigestFormat{})
	if err != nil {
		return err
	}
	s := cards.Store()
	var out any
	switch name {
	case "card add":
		if c.AccountNumber == "" || c.PAN == "" || c.HolderName == "" {
			return errors.New("--account, --pan and --holder are required")
		}
		if c.ID == "" {
			c.ID = "card-" + fmt.Sprint(time.Now().UnixNano())
		}
		if c.ExpiryDate == "" {
			c.ExpiryDate = time.Now().AddDate(3, 0, 0).Format("2006-01-02")
		}
		c.OrgID, c.Status = *org, st
		if err := cardAccount(ctx, bankingsql.NewIdentityStore(db), &c); err != nil {
			return err
		}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := s.InsertCard(ctx, c); err != nil {
			return err
		}
		out, err = cards.CardWithLimit(ctx, c.OrgID, c.ID)
	case "card list":
		var views []banking.CardView
		accounts, err := s.CardAccounts(ctx, *org)
		if err != nil {
			return err
		}
		f := banking.CardFilter{OrgID: *org, Accounts: accounts, Limit: 1 << 30}
		if status != "" {
			f.Statuses = []banking.CardStatus{st}
		}
		list, err := s.ListCards(ctx, f)
		if err != nil {
			return err
		}
		for _, card := range list {
			v, err := cards.CardWithLimit(ctx, card.OrgID, card.ID)
			if err != nil {
				return err
			}
			views = append(views, v)
		}
		out = views
	case "card set-status":
		if c.ID == "" || status == "" {
			return errors.New("--id and --status are required")
		}
		if err := s.SetCardStatus(ctx, *org, c.ID, st); err != nil {
			return err
		}
		out, err = cards.CardWithLimit(ctx, *org, c.ID)
	case "card limit-setting":
		// Reference §11: with the setting off an application is 400
		// WORKFLOW_FAULT. The bank's client turns it in its own settings;
		// this command stands in for that, in any contour.
		if err := bankingsql.NewCardStore(db).SetCardLimitsOff(ctx, *org, state == "off"); err != nil {
			return err
		}
		out = map[string]string{"orgId": *org, "cardLimits": state}
	case "clock advance":
		positional = append(positional, fs.Args()...)
		if len(positional) != 1 {
			return errors.New("usage: partnerapi banking clock advance DURATION")
		}
		d, perr := time.ParseDuration(positional[0])
		if perr != nil {
			return fmt.Errorf("duration %q: %w", positional[0], perr)
		}
		now, aerr := cards.AdvanceClock(ctx, d)
		if aerr != nil {
			return aerr
		}
		out = map[string]string{"now": now.Format(time.RFC3339)}
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(sio.out).Encode(out)
}

// cardAccount checks that the account c is put on is one of its
// organisation's (`banking account add`) and gives c that account's BIC,
// the card's bankBic, when --bic was not given. The bank issues cards on
// its client's own accounts only, and a card on an account the
// organisation does not have would never be listed, for no partner's
// offer covers it; a --bic other than the account's would answer a
// bankBic no account of the card has.
func cardAccount(ctx context.Context, accounts banking.IdentityStore, c *banking.Card) error {
	a, err := accounts.GetAccount(ctx, c.AccountNumber)
	if err != nil {
		return flagNotFound("--account", c.AccountNumber, "account", err)
	}
	if a.OrgID != c.OrgID {
		return fmt.Errorf("--account %s: not an account of organisation %s (--org)", c.AccountNumber, c.OrgID)
	}
	switch {
	case c.BIC == "":
		c.BIC = a.BIC
	case c.BIC != a.BIC:
		return fmt.Errorf("--bic %s: account %s is at BIC %s", c.BIC, c.AccountNumber, a.BIC)
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

func init() {
	bankingCommands["cert list"] = certListCmd
	bankingCommands["cert activate"] = func(stdio) bankingCmd { return certSetActiveCmd(true) }
	bankingCommands["cert deactivate"] = func(stdio) bankingCmd { return certSetActiveCmd(false) }
}

// certListEntry is one certificate as `banking cert list` prints it.
// Active is the operator's flag (cert activate / deactivate); the
// validity period is the certificate's own, empty when its DER does not
// parse; ActiveNow is both together at the wall clock, what /v1/crypto
// reports as active and whether the bank takes signatures made with it.
type certListEntry struct {
	UUID      string `json:"uuid"`
	User      string `json:"user"`
	Org       string `json:"org"`
	Role      string `json:"role"`
	Type      string `json:"type"`
	Active    bool   `json:"active"`
	ActiveNow bool   `json:"activeNow"`
	Issuer    string `json:"issuer"`
	Serial    string `json:"serial"`
	NotBefore string `json:"notBefore,omitempty"`
	NotAfter  string `json:"notAfter,omitempty"`
}

func newCertListEntry(c banking.Certificate) certListEntry {
	e := certListEntry{UUID: c.UUID, User: c.UserID, Org: c.OrgID, Role: string(c.Role), Type: c.TypeName,
		Active: c.Active, ActiveNow: c.UsableAt(time.Now()), Issuer: c.Issuer, Serial: c.Serial}
	if cert, err := gost.ParseCertificate(c.DER); err == nil {
		e.NotBefore, e.NotAfter = cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339)
	}
	return e
}

// certListCmd lists the signing certificates of a user, or of every user
// of an organisation, as the bank holds them.
func certListCmd(stdio) bankingCmd {
	var user, org string
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&user, "user", "", "user id or login whose certificates to list")
			fs.StringVar(&org, "org", "", "organisation id whose users' certificates to list")
		},
		run: func(ctx context.Context, id *banking.Identity) (any, error) {
			if (user == "") == (org == "") {
				return nil, errors.New("exactly one of --user and --org is required")
			}
			users := []string{user}
			if org != "" {
				if _, err := id.Store.GetOrg(ctx, org); err != nil {
					return nil, flagNotFound("--org", org, "organisation", err)
				}
				us, err := id.Store.ListUsers(ctx, org)
				if err != nil {
					return nil, err
				}
				users = users[:0]
				for _, u := range us {
					users = append(users, u.ID)
				}
			} else if u, err := lookupUser(ctx, id.Store, user); err != nil {
				return nil, flagNotFound("--user", user, "user", err)
			} else {
				users[0] = u.ID
			}
			out := []certListEntry{}
			for _, u := range users {
				certs, err := id.Store.ListCertificates(ctx, u)
				if err != nil {
					return nil, err
				}
				for _, c := range certs {
					out = append(out, newCertListEntry(c))
				}
			}
			return out, nil
		},
	}
}

// certSetActiveCmd is `banking cert activate` (active) or `cert
// deactivate`: whether the bank takes signatures made with the
// certificate from now on. Documents signed before keep their status.
func certSetActiveCmd(active bool) bankingCmd {
	var uuid string
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&uuid, "uuid", "", "certificate uuid")
		},
		run: func(ctx context.Context, id *banking.Identity) (any, error) {
			if uuid == "" {
				return nil, errors.New("--uuid is required")
			}
			if err := id.Store.SetCertificateActive(ctx, uuid, active); err != nil {
				return nil, flagNotFound("--uuid", uuid, "certificate", err)
			}
			c, err := id.Store.GetCertificate(ctx, uuid)
			if err != nil {
				return nil, fmt.Errorf("--uuid %s: %w", uuid, err)
			}
			return newCertListEntry(c), nil
		},
	}
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"partnerapi/internal/banking"
)

func init() {
	bankingCommands["cert-request activate"] = certRequestActivateCmd
}

// certRequestActivateCmd is the bank's own activation of a certificate
// request: in production the API refuses to activate (the user brings the
// signed paper form to the bank, reference §10), so the bank's staff
// activate it here once they have checked the form, with the key serve
// signs with (--banking-jws-key, or the data directory's). It prints the
// request's state, whose comment names the issued certificate's uuid.
func certRequestActivateCmd(stdio) bankingCmd {
	var org, externalID, keyFile string
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&org, "org", "", "organisation id of the request")
			fs.StringVar(&externalID, "external-id", "", "the request's externalId")
			fs.StringVar(&keyFile, "banking-jws-key", "", "PEM file with the bank's GOST key and certificate, as serve's (default: the data directory's)")
		},
		withStore: func(ctx context.Context, id *banking.Identity, store storeConfig) (any, error) {
			if org == "" || externalID == "" {
				return nil, errors.New("--org and --external-id are required")
			}
			if _, err := id.Store.GetOrg(ctx, org); err != nil {
				return nil, flagNotFound("--org", org, "organisation", err)
			}
			requests, ok := id.Store.(interface {
				banking.CertRequestStore
				GetUserByLogin(ctx context.Context, login string) (banking.User, error)
				GetOrg(ctx context.Context, id string) (banking.Organisation, error)
			})
			if !ok {
				return nil, fmt.Errorf("the identity store keeps no certificate requests")
			}
			key, err := bankKey(keyFile, store.DataDir)
			if err != nil {
				return nil, err
			}
			svc := &banking.CertRequests{Store: requests, Directory: requests, CA: key}
			r, err := svc.ActivateAtBank(ctx, org, externalID)
			if err != nil {
				var be *banking.Error
				if errors.As(err, &be) {
					return nil, errors.New(be.Message)
				}
				return nil, err
			}
			return r.State(), nil
		},
	}
}

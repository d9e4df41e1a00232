package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"partnerapi/internal/banking"
)

func init() {
	bankingCommands["payment delete"] = paymentDeleteCmd
}

// deletedPayment is what `banking payment delete` prints: the fields of the
// webhook the deletion queued, so a partner's CI can wait for exactly that
// delivery.
type deletedPayment struct {
	ExternalID  string          `json:"externalId"`
	BankStatus  string          `json:"bankStatus"`
	BankComment banking.Comment `json:"bankComment"`
	EventTime   string          `json:"eventTime"`
}

// paymentDeleteCmd is a bank user deleting a draft in the bank's UI
// (reference §6, CREATED ─delete─> DELETED). The API offers partners no
// such operation, so this command stands in for the bank's UI: it is the
// only way a document reaches DELETED, the failure webhook a partner's
// consumer has to handle, which the sandbox (signed documents end
// IMPLEMENTED at once) would otherwise never send.
func paymentDeleteCmd(stdio) bankingCmd {
	var org, externalID, comment string
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&org, "org", "", "organisation id of the document")
			fs.StringVar(&externalID, "external-id", "", "the document's externalId")
			fs.StringVar(&comment, "comment", "", "the bank's comment on the deletion: the document's and its webhook's bankComment (default none, answered null)")
		},
		withPayments: func(ctx context.Context, id *banking.Identity, payments banking.PaymentStore) (any, error) {
			if org == "" || externalID == "" {
				return nil, errors.New("--org and --external-id are required")
			}
			if _, err := id.Store.GetOrg(ctx, org); err != nil {
				return nil, flagNotFound("--org", org, "organisation", err)
			}
			sp, err := banking.DeleteDraft(ctx, payments, org, externalID, comment, time.Now())
			if banking.KindOf(err) == banking.KindDataNotFound {
				return nil, fmt.Errorf("--external-id %s: organisation %s has no payment document with this externalId", externalID, org)
			}
			if err != nil {
				return nil, cliErr(err)
			}
			return deletedPayment{sp.Doc.ExternalID, sp.Status, banking.Comment(sp.Comment), sp.UpdatedAt.UTC().Format(time.RFC3339Nano)}, nil
		},
	}
}

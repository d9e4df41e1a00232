package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"partnerapi/internal/banking"
)

func init() {
	bankingCommands["payment edit"] = paymentEditCmd
}

// editedPayment is what `banking payment edit` prints: where the edit left
// the document, and when.
type editedPayment struct {
	ExternalID  string          `json:"externalId"`
	BankStatus  string          `json:"bankStatus"`
	BankComment banking.Comment `json:"bankComment"`
	EditedAt    string          `json:"editedAt"`
}

// paymentEditCmd is a bank user correcting a document that failed its
// checks in the bank's UI (reference §6, CHECKERROR ─edit─> CREATED). The
// API offers partners no such operation, so this command stands in for the
// bank's UI, in any contour: without it a document in CHECKERROR could only
// be deleted. --file is the corrected document as the partner's create
// sends it ("-": standard input). The document is judged as the server
// judges a create, so the command takes the server's flags that decide
// CHECKERROR, with the same defaults: run it with the values the server
// runs with.
func paymentEditCmd(sio stdio) bankingCmd {
	var org, externalID, file, checksums, zone string
	var checkDays int
	var budgetRules bool
	return bankingCmd{
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&org, "org", "", "organisation id of the document")
			fs.StringVar(&externalID, "external-id", "", "the document's externalId")
			fs.StringVar(&file, "file", "", "the corrected document, JSON as its create takes it, without digestSignatures (-: standard input)")
			fs.StringVar(&checksums, "banking-checksum-failures", string(banking.ChecksCheckError), "failed check digits and logical controls (INN, account key, UIN, budget rules): checkerror (stored, CHECKERROR) or reject (refused), as the server's")
			fs.IntVar(&checkDays, "banking-invoice-checkerror-days", 10, "payment orders and invoice drafts dated this many days ahead or more get CHECKERROR (negative: off), as the server's")
			fs.BoolVar(&budgetRules, "banking-budget-rules", true, "apply the §5.8 logical controls to budget payments, as the server does")
			fs.StringVar(&zone, "banking-time-zone", banking.DefaultBankZone, "IANA time zone of the bank, whose calendar date document dates are judged against, as the server's")
		},
		withPayments: func(ctx context.Context, id *banking.Identity, payments banking.PaymentStore) (any, error) {
			if org == "" || externalID == "" || file == "" {
				return nil, errors.New("--org, --external-id and --file are required")
			}
			mode, err := banking.ParseChecksumMode(checksums)
			if err != nil {
				return nil, fmt.Errorf("--banking-checksum-failures: %w", err)
			}
			loc, err := bankZone(zone)
			if err != nil {
				return nil, err
			}
			if _, err := id.Store.GetOrg(ctx, org); err != nil {
				return nil, flagNotFound("--org", org, "organisation", err)
			}
			d, err := readEditedPayment(file, sio.in)
			if err != nil {
				return nil, err
			}
			if checkDays == 0 {
				checkDays = -1 // 0 would mean the default inside PaymentConfig
			}
			svc := &banking.PaymentService{Store: payments, Accounts: banking.IdentityAccounts{Store: id.Store},
				Config: banking.PaymentConfig{CheckErrorDaysAhead: checkDays, SkipBudgetRules: !budgetRules, ChecksumFailures: mode, Location: loc}}
			sp, err := svc.EditDraft(ctx, org, externalID, d, time.Now())
			if banking.KindOf(err) == banking.KindDataNotFound {
				return nil, fmt.Errorf("--external-id %s: organisation %s has no payment document with this externalId", externalID, org)
			}
			if err != nil {
				return nil, cliErr(err)
			}
			return editedPayment{sp.Doc.ExternalID, sp.Status, banking.Comment(sp.Comment), sp.UpdatedAt.UTC().Format(time.RFC3339Nano)}, nil
		},
	}
}

// readEditedPayment reads the corrected document from file ("-": in),
// decoded as the API decodes a create's body, so a field of the wrong type
// is refused in the same words.
func readEditedPayment(file string, in io.Reader) (banking.Payment, error) {
	var body []byte
	var err error
	if file == "-" {
		body, err = io.ReadAll(in)
	} else {
		body, err = os.ReadFile(file)
	}
	if err != nil {
		return banking.Payment{}, fmt.Errorf("--file: %w", err)
	}
	var d banking.Payment
	if err := json.Unmarshal(body, &d); err != nil {
		return banking.Payment{}, fmt.Errorf("--file %s: %w", file, cliErr(banking.DeserializationFault(body, err)))
	}
	return d, nil
}

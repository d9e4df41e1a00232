package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// readmeProvisioningBlock is the README's code block of provisioning
// commands, the one a new user copies from.
func readmeProvisioningBlock(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "Provisioning commands (all print JSON")
	if start < 0 {
		t.Fatal("README: no \"Provisioning commands\" paragraph")
	}
	block := readme[start:]
	open := strings.Index(block, "```\n")
	if open < 0 {
		t.Fatal("README: no code block after \"Provisioning commands\"")
	}
	block = block[open+4:]
	end := strings.Index(block, "```")
	if end < 0 {
		t.Fatal("README: the provisioning code block does not end")
	}
	return block[:end]
}

// readmeUsage is what the README's provisioning block shows for cmd
// ("banking org create"): after "partnerapi banking org " up to the next
// command on the line, the alternative (between " | ") whose first word
// names "create", itself or among others ("create|rotate|delete"), without
// that word.
func readmeUsage(block, cmd string) (string, bool) {
	parent, leaf := cmd[:strings.LastIndex(cmd, " ")], cmd[strings.LastIndex(cmd, " ")+1:]
	for _, line := range strings.Split(block, "\n") {
		for rest := line; ; {
			i := strings.Index(rest, "partnerapi "+parent+" ")
			if i < 0 {
				break
			}
			rest = rest[i+len("partnerapi "+parent):]
			u := rest
			if j := strings.Index(u, "partnerapi "); j >= 0 {
				u = u[:j]
			}
			for _, alt := range strings.Split(u, " | ") {
				fields := strings.Fields(alt)
				if len(fields) == 0 {
					continue
				}
				for _, name := range strings.Split(fields[0], "|") {
					if name == leaf {
						return " " + strings.Join(fields[1:], " "), true
					}
				}
			}
		}
	}
	return "", false
}

// Every provisioning command with flags it cannot do without shows them on
// its README line, and run without them it says which flags it needs,
// instead of a model's Russian field names or a "not found" for an empty
// id. `partnerapi banking` alone lists every banking command the README
// shows, the card, clock and webhook ones included.
func TestReadmeProvisioningRequiredFlags(t *testing.T) {
	block := readmeProvisioningBlock(t)
	dir := t.TempDir()
	for _, c := range []struct {
		cmd      string
		required []string
	}{
		{"banking org create", []string{"--name", "--inn"}},
		{"banking account add", []string{"--org", "--number", "--bic"}},
		{"banking user create", []string{"--org", "--login"}},
		{"banking cert add", []string{"--user", "--cert"}},
		{"banking offer sign", []string{"--client", "--account"}},
		{"banking sign", []string{"--cert", "--key"}},
		{"banking card add", []string{"--account", "--pan", "--holder"}},
		{"banking app scopes", []string{"--client"}},
		{"banking app create", []string{"--name"}},
		{"banking payment delete", []string{"--org", "--external-id"}},
		{"banking payment edit", []string{"--org", "--external-id", "--file"}},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			usage, ok := readmeUsage(block, c.cmd)
			if !ok {
				t.Fatalf("README's provisioning block has no line for partnerapi %s", c.cmd)
			}
			args := append(strings.Fields(c.cmd), "--data-dir", dir)
			err := run(context.Background(), args, noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
			if err == nil {
				t.Fatalf("partnerapi %s without flags: no error", c.cmd)
			}
			for _, f := range c.required {
				if !strings.Contains(usage+" ", " "+f+" ") {
					t.Errorf("README: partnerapi %s%s lacks its required %s", c.cmd, usage, f)
				}
				if !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "required") {
					t.Errorf("partnerapi %s without flags: %q, want it to say that %s is required", c.cmd, err, f)
				}
			}
		})
	}
	err := run(context.Background(), []string{"banking"}, noEnv, stdio{out: io.Discard, err: io.Discard})
	for _, cmd := range []string{"card add", "clock advance", "webhook set", "jws-certificate", "payment delete", "payment edit"} {
		if err == nil || !strings.Contains(err.Error(), cmd) {
			t.Errorf("partnerapi banking: %v, want its usage to name %q", err, cmd)
		}
	}
}

// A domain error reaches whoever runs a card command as its message, not
// as "banking error 8: ...", a kind number only the API's mapping reads.
func TestBankingCardsCLIErrorsWithoutKindNumbers(t *testing.T) {
	args := []string{"banking", "card", "set-status", "--id", "no-such-card", "--status", "BLOCKED", "--data-dir", t.TempDir()}
	err := run(context.Background(), args, noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
	if err == nil || strings.Contains(err.Error(), "banking error") || !strings.Contains(err.Error(), "no-such-card") {
		t.Fatalf("partnerapi %s: %v, want the card's not-found message alone", strings.Join(args, " "), err)
	}
}

// A flag naming an organisation, app or user the store does not have is
// answered in those words, not with the store's "banking: not found".
func TestBankingCLINamesWhatIsNotFound(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"banking", "token", "--scope", "PAY_DOC_RU", "--org", "ghost"},
		{"banking", "token", "--scope", "PAY_DOC_RU", "--client", "ghost"},
		{"banking", "app", "secret", "--client", "ghost"},
		{"banking", "app", "scopes", "--client", "ghost"},
		{"banking", "account", "add", "--org", "ghost", "--number", "40702810938000012345", "--bic", "044525225"},
		{"banking", "offer", "sign", "--client", "ghost", "--account", "40702810938000012345"},
		{"banking", "user", "signing-method", "--user", "ghost", "--signing-method", "Token"},
		{"banking", "payment", "delete", "--org", "ghost", "--external-id", "a0000000-0000-4000-8000-000000000001"},
		{"banking", "payment", "edit", "--org", "ghost", "--external-id", "a0000000-0000-4000-8000-000000000001", "--file", "doc.json"},
	} {
		err := run(context.Background(), append(args, "--data-dir", dir), noEnv, stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "ghost: no such ") {
			t.Errorf("partnerapi %s: %v, want \"ghost: no such ...\"", strings.Join(args, " "), err)
		}
	}
}

// Every card command acts on the sandbox organisation unless told --org, so
// the README's provisioning block shows --org on each of them: set-status
// without it does not find a card of another organisation.
func TestReadmeCardCommandsShowOrg(t *testing.T) {
	block := readmeProvisioningBlock(t)
	for _, cmd := range []string{"banking card add", "banking card list", "banking card set-status", "banking card limit-setting"} {
		usage, ok := readmeUsage(block, cmd)
		if !ok {
			t.Fatalf("README's provisioning block has no line for partnerapi %s", cmd)
		}
		if !strings.Contains(usage, "[--org ORG]") {
			t.Errorf("README: partnerapi %s%s does not show [--org ORG]", cmd, usage)
		}
	}
}

package main

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/billjournal"
)

// A bill that a serve journaled in its data directory and never saw
// charged (the process killed during an outage) is counted by
// partnerapi_assistant_kept_bills as soon as the next serve on that data
// directory starts, and charged by it once the database takes it.
func TestServeChargesBillsJournaledByAProcessGone(t *testing.T) {
	data := t.TempDir()
	creds, err := createAssistantClient(t, data, "--scope", "ASSISTANT_API_PERS", "--balance", "stories260K=1000")
	if err != nil {
		t.Fatal(err)
	}
	j, err := billjournal.Open(filepath.Join(data, billJournalDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Keep(assistant.Bill{ID: rand.Text(), ClientID: creds["client_id"], Model: "stories260K", Prepaid: true, Tokens: 17,
		MadeAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	j.Close() // the bill stays journaled, as a killed process leaves it

	ts := startServer(t, "--data-dir", data, "--models-dir", t.TempDir(), "--only", "assistant")
	base := ts.urls["assistant"]
	if got := engineMetric(t, base, "partnerapi_assistant_kept_bills"); got != 1 {
		t.Fatalf("partnerapi_assistant_kept_bills = %v at start, want the 1 journaled", got)
	}
	tok := assistantToken(t, base, "ASSISTANT_API_PERS", creds["authorization_key"])
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest("GET", base+"/api/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			Balance []struct {
				Usage string `json:"usage"`
				Value int64  `json:"value"`
			} `json:"balance"`
		}
		err = json.NewDecoder(resp.Body).Decode(&b)
		resp.Body.Close()
		if err != nil || len(b.Balance) != 1 {
			t.Fatalf("balance: %d %v %+v", resp.StatusCode, err, b)
		}
		if b.Balance[0].Value == 1000-17 {
			break
		}
		if b.Balance[0].Value != 1000 || time.Now().After(deadline) {
			t.Fatalf("balance %d, want 1000 and then 983 once the journaled bill is charged", b.Balance[0].Value)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The bill leaves the count just after its charge commits.
	for engineMetric(t, base, "partnerapi_assistant_kept_bills") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("partnerapi_assistant_kept_bills is not 0 once the bill is charged")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

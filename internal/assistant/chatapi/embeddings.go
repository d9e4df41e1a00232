package chatapi

import (
	"encoding/json"
	"io"
	"net/http"

	"partnerapi/internal/assistant"
	"partnerapi/internal/web"
)

// wireEmbeddingsRequest accepts input as an array (what clients send) or a
// single string (what OpenAI-style callers also send).
type wireEmbeddingsRequest struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
}

func decodeEmbeddings(r io.Reader) (string, []string, error) {
	var w wireEmbeddingsRequest
	if err := decodeJSON(r, &w); err != nil {
		return "", nil, err
	}
	var inputs []string
	if json.Unmarshal(w.Input, &inputs) != nil {
		var one string
		if json.Unmarshal(w.Input, &one) != nil {
			return "", nil, &assistant.InvalidParams{Status: 400, Message: "input must be an array of strings"}
		}
		inputs = []string{one}
	}
	return w.Model, inputs, nil
}

type wireEmbedding struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
	Usage     struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// embeddings serves POST /embeddings (reference §3.7): usage per item and
// none at the top level; "model" echoes the name the client asked for, as
// the provider does ("Embeddings").
func (s *server) embeddings(w http.ResponseWriter, r *http.Request) {
	model, inputs, err := decodeEmbeddings(r.Body)
	if err != nil {
		s.bodyError(w, r, err)
		return
	}
	if model == "" {
		model = assistant.DefaultEmbeddingsModel
	}
	p := principal(r)
	m, err := s.svc.PrepareEmbed(r.Context(), p, model, inputs)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	release, err := s.svc.Acquire(r.Context(), p)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	defer release()
	// Embedding many long inputs may outlast the write deadline that runs
	// from the request's start; the answer gets it whole once ready.
	web.DeferWriteDeadline(w)
	res, err := s.svc.Embed(r.Context(), p, m, inputs)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	out := struct {
		Object string          `json:"object"`
		Model  string          `json:"model"`
		Data   []wireEmbedding `json:"data"`
	}{Object: "list", Model: model, Data: make([]wireEmbedding, 0, len(res.Items))}
	for i, it := range res.Items {
		e := wireEmbedding{Object: "embedding", Index: i, Embedding: it.Vector}
		e.Usage.PromptTokens = it.PromptTokens
		out.Data = append(out.Data, e)
	}
	writeJSON(w, http.StatusOK, out)
}

type wireFunctionIssue struct {
	Description    string `json:"description"`
	SchemaLocation string `json:"schema_location"`
}

func toWireIssues(issues []assistant.FunctionIssue) []wireFunctionIssue {
	if len(issues) == 0 {
		return nil
	}
	out := make([]wireFunctionIssue, len(issues))
	for i, is := range issues {
		out[i] = wireFunctionIssue{is.Description, is.SchemaLocation}
	}
	return out
}

// validateFunction serves POST /functions/validate (reference §3.8): 200
// for any function description, valid or not, with the findings; 400 only
// for a body that is not a JSON object.
func (s *server) validateFunction(w http.ResponseWriter, r *http.Request) {
	var raw json.RawMessage
	if err := decodeJSON(r.Body, &raw); err != nil {
		s.bodyError(w, r, err)
		return
	}
	v, err := assistant.ValidateFunction(raw)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	msg := "Function is valid"
	if !v.Valid() {
		msg = "Function is invalid"
	}
	writeJSON(w, http.StatusOK, struct {
		Status             int                 `json:"status"`
		Message            string              `json:"message"`
		JSONAIRulesVersion string              `json:"json_ai_rules_version"`
		Errors             []wireFunctionIssue `json:"errors,omitempty"`
		Warnings           []wireFunctionIssue `json:"warnings,omitempty"`
	}{http.StatusOK, msg, assistant.FunctionRulesVersion, toWireIssues(v.Errors), toWireIssues(v.Warnings)})
}

package chatapi

import "partnerapi/internal/web"

// oauthPath is the token endpoint, whose errors have an envelope of their
// own (errors.go).
const oauthPath = "/api/v2/oauth"

// addRoutes lists the assistant API. Every route here is in api/assistant.yaml.
// Routes that take a JSON body check its Content-Type (jsonBody) once the
// token is known, so a request without one is still 401 first.
func addRoutes(mux *web.Mux, d Deps) {
	s := &server{svc: d.Service, log: d.Log}
	mux.HandleFunc("POST", oauthPath, s.oauth)
	// The legacy password flow answers in the API's envelope, as every
	// path under /api/v1 does (legacyTokenError).
	mux.HandleFunc("POST", "/api/v1/token", s.legacyToken)
	mux.HandleFunc("GET", "/api/v1/models", s.auth(s.models))
	mux.HandleFunc("GET", "/api/v1/models/{model}", s.auth(s.model))
	mux.HandleFunc("POST", "/api/v1/chat/completions", s.auth(jsonBody(s.chat)))
	mux.HandleFunc("POST", "/api/v1/tokens/count", s.auth(jsonBody(s.tokensCount)))
	mux.HandleFunc("GET", "/api/v1/balance", s.auth(s.balance))
	mux.HandleFunc("POST", "/api/v1/embeddings", s.auth(jsonBody(s.embeddings)))
	mux.HandleFunc("POST", "/api/v1/functions/validate", s.auth(jsonBody(s.validateFunction)))
	mux.HandleFunc("POST", "/api/v1/files", s.auth(s.uploadFile))
	mux.HandleFunc("GET", "/api/v1/files", s.auth(s.files))
	mux.HandleFunc("GET", "/api/v1/files/{file}", s.auth(s.file))
	mux.HandleFunc("GET", "/api/v1/files/{file}/content", s.auth(s.fileContent))
	mux.HandleFunc("POST", "/api/v1/files/{file}/delete", s.auth(jsonBody(s.deleteFile)))
	mux.HandleFunc("POST", "/api/v1/ai/check", s.auth(jsonBody(s.aiCheck)))
}

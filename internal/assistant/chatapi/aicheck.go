package chatapi

import (
	"net/http"

	"partnerapi/internal/web"
)

// aiCheck serves POST /ai/check (reference §3.9): which parts of the input
// the named model would have written. It holds one of the client's
// concurrent-request slots while the model reads the text, taken once the
// request is known to be one the model can answer.
func (s *server) aiCheck(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input string `json:"input"`
		Model string `json:"model"`
	}
	if err := decodeJSON(r.Body, &req); err != nil {
		s.bodyError(w, r, err)
		return
	}
	p := principal(r)
	m, err := s.svc.PrepareAICheck(r.Context(), p, req.Model, req.Input)
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
	// Scoring a long text may outlast the write deadline that runs from
	// the request's start; the answer gets it whole once ready.
	web.DeferWriteDeadline(w)
	res, err := s.svc.AICheck(r.Context(), p, m, req.Input)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	intervals := make([][]int, 0, len(res.AIIntervals))
	for _, iv := range res.AIIntervals {
		intervals = append(intervals, []int{iv[0], iv[1]})
	}
	writeJSON(w, http.StatusOK, struct {
		Category    string  `json:"category"`
		Characters  int     `json:"characters"`
		Tokens      int     `json:"tokens"`
		AIIntervals [][]int `json:"ai_intervals"`
	}{res.Category, res.Characters, res.Tokens, intervals})
}

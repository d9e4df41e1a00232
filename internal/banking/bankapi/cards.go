package bankapi

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"partnerapi/internal/jsonmsg"
	"slices"
	"strconv"
	"strings"
	"time"

	"partnerapi/internal/banking"
	"partnerapi/internal/jsonexact"
	"partnerapi/internal/web"
)

// cardsBase is the provider's path prefix (reference §1) for the card area.
const cardsBase = "/fintech/api"

func (s *server) addCardRoutes(mux *web.Mux) {
	if s.Cards == nil {
		return
	}
	// Every card operation is gated as the payment operations are
	// (maintenance 503, rate limit 429 per token and operation; auth.go,
	// gated), the sandbox clock too: like the sandbox's payment edit and
	// delete it is a partner's call under the API's prefix that writes,
	// and a partner rehearsing the bank's maintenance window must see the
	// whole API closed, not parts of it.
	gate := func(op string, h http.HandlerFunc) http.HandlerFunc {
		return s.gatedScope(func() *banking.Gate { return s.Cards.Gate }, op, h, banking.ScopeBusinessCardLimit)
	}
	// A reference sample lists cards with POST; the stated method is GET,
	// both work, and both are the one operation with one budget.
	list := gate("card-list", s.listCards)
	mux.HandleFunc("GET", cardsBase+"/v1/business-cards", list)
	mux.HandleFunc("POST", cardsBase+"/v1/business-cards", list)
	mux.HandleFunc("POST", cardsBase+"/v1/business-cards/limits", gate("card-limit-create", s.createCardLimit))
	mux.HandleFunc("GET", cardsBase+"/v1/business-cards/limits/{externalId}/state", gate("card-limit-state", s.cardLimitState))
	mux.HandleFunc("POST", cardsBase+"/v1/business-cards/limits/{externalId}/sign", gate("card-limit-sign", s.signCardLimit))
	mux.HandleFunc("POST", cardsBase+"/sandbox/clock", gate("sandbox-clock", s.advanceClock))
}

type cardLink struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

type cardListBody struct {
	Links         []cardLink         `json:"links"`
	BusinessCards []banking.CardView `json:"businessCards"`
}

// parseStatusCodes accepts statusCodes comma-separated, repeated, or both.
func parseStatusCodes(q []string) []banking.CardStatus {
	var out []banking.CardStatus
	for _, v := range q {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, banking.CardStatus(upperASCII(p)))
			}
		}
	}
	return out
}

// upperASCII upper-cases the ASCII letters of s only: the statuses are
// ASCII names matched without letter case, and strings.ToUpper would also
// make ı (dotless i) an I and ſ (long s) an S, so that "actıve" passed for
// ACTIVE.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 0x20
		}
	}
	return string(b)
}

// statusLetters spell a status filter in a page link whose status names
// do not fit: the reference caps href at 60 characters, and
// "/fintech/api/v1/business-cards?page=2&statusCodes=ACTIVE,BLOCKED" is
// 64. A link is the server's to read back (clients follow it as given), so
// a filter too long for the names travels as statusSet, one letter a
// status, rather than being dropped: a dropped filter made the next page a
// page of every card.
var statusLetters = map[banking.CardStatus]byte{
	banking.CardActive: 'A', banking.CardBlocked: 'B', banking.CardToBeReissued: 'R',
	banking.CardToBeBlocked: 'T', banking.CardNotDelivered: 'N',
}

// maxHref is the reference's limit on a page link (§11: "href ≤ 60 chars,
// absolute or relative").
const maxHref = 60

// pageHref is the link to another page with the same status filter: the
// statuses' names when they fit in the reference's 60 characters, else
// their letters (statusSet). A status without a letter is not one List
// answers, so no link is made for it; it keeps only the page.
//
// path is the list's path as the client calls it (the API prefix, then
// /v1/business-cards), and the link is that path with the query: a
// path-absolute reference. A query-only one ("?page=2") is resolved right
// by RFC 3986 clients but not by java.net.URI.resolve, which follows RFC
// 2396 and drops the path's last segment (…/v1/?page=2, a 404), so a Java
// partner following next got lost. Only when the path with the query
// would pass the limit (a --banking-prefix longer than about 20
// characters) is the link the query alone, which the reference allows as
// well.
func pageHref(path string, page int, statuses []banking.CardStatus) string {
	q := "?page=" + strconv.Itoa(page)
	if len(statuses) > 0 {
		var names []string
		letters := make([]byte, 0, len(statusLetters))
		for _, st := range statuses {
			c, ok := statusLetters[st]
			if !ok {
				return shortest(path, q)
			}
			if !slices.Contains(letters, c) {
				letters = append(letters, c)
				names = append(names, string(st))
			}
		}
		byName, byLetter := q+"&statusCodes="+strings.Join(names, ","), q+"&statusSet="+string(letters)
		for _, h := range []string{path + byName, path + byLetter} {
			if len(h) <= maxHref {
				return h
			}
		}
		if len(byName) <= maxHref {
			return byName
		}
		return byLetter
	}
	return shortest(path, q)
}

// shortest is path+query when it fits in the reference's limit, else the
// query alone (see pageHref).
func shortest(path, query string) string {
	if len(path)+len(query) <= maxHref {
		return path + query
	}
	return query
}

// parseStatusSet reads the letters of a page link's statusSet; ok is false
// for a letter that names no status.
func parseStatusSet(q []string) (out []banking.CardStatus, ok bool) {
	for _, v := range q {
		for i := 0; i < len(v); i++ {
			found := false
			for st, c := range statusLetters {
				if c == v[i] {
					out, found = append(out, st), true
				}
			}
			if !found {
				return nil, false
			}
		}
	}
	return out, true
}

// queryInt reads an integer query parameter written in plain decimal:
// ASCII digits only, without a sign and without leading zeros ("0" alone
// is zero). strconv.Atoi also takes "+2" and "007", so one page would have
// had several addresses and a typo such as page=+ would have gone
// unnoticed; the reference shows only plain numbers, so anything else is
// the caller's mistake and is refused as page=x is.
func queryInt(v string) (int, bool) {
	if v == "" || v[0] == '+' || v[0] == '-' || len(v) > 1 && v[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// cardListPath is the card list's path under the API prefix the
// deployment is configured with (--banking-prefix), which it serves besides
// the provider's and /openapi.yaml names: the path the page links carry.
func (s *server) cardListPath() string {
	p := s.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	return p + "/v1/business-cards"
}

func (s *server) listCards(w http.ResponseWriter, r *http.Request) {
	page := 1
	if v := r.URL.Query().Get("page"); v != "" {
		n, ok := queryInt(v)
		if !ok {
			s.writeCardError(w, r, &banking.Error{Kind: banking.KindValidation, Message: "Параметр page должен быть целым числом",
				FieldNames: []string{"page"}, Checks: []string{"integer >= 1"}})
			return
		}
		page = n
	}
	statuses := parseStatusCodes(r.URL.Query()["statusCodes"])
	set, ok := parseStatusSet(r.URL.Query()["statusSet"])
	if !ok {
		s.writeCardError(w, r, &banking.Error{Kind: banking.KindValidation, Message: "Параметр statusSet — буквы статусов из ссылки страницы",
			FieldNames: []string{"statusSet"}, Checks: []string{"[ABRTN]*"}})
		return
	}
	statuses = append(statuses, set...)
	res, err := s.Cards.List(r.Context(), principalFrom(r.Context()), page, statuses)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	body := cardListBody{Links: []cardLink{}, BusinessCards: res.Cards}
	if page > 1 {
		body.Links = append(body.Links, cardLink{Href: pageHref(s.cardListPath(), page-1, statuses), Rel: "prev"})
	}
	if res.HasNext {
		body.Links = append(body.Links, cardLink{Href: pageHref(s.cardListPath(), page+1, statuses), Rel: "next"})
	}
	writeJSON(w, http.StatusOK, body)
}

// readBody reads a request body within the platform's limit.
func (s *server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if web.IsBodyTooLarge(err) {
			s.platformError(w, r, http.StatusRequestEntityTooLarge, web.ErrBodyTooLarge)
		} else {
			s.writeCardError(w, r, banking.Errorf(banking.KindDeserialization, "Не удалось прочитать тело запроса"))
		}
		return nil, false
	}
	if err := utf8Body(b); err != nil {
		s.writeCardError(w, r, err)
		return nil, false
	}
	return b, true
}

// cardLimitBody reads a card-limit request's body, JSON or the payload of
// a compact JWS (reference §9.6), and the channel it came by: a partner the
// JWS setting names gets 415 JWS_EXCEPTED for a JSON one. ok is false once
// the error is answered.
func (s *server) cardLimitBody(w http.ResponseWriter, r *http.Request, p banking.Principal) (body []byte, channel string, ok bool) {
	body, ok = s.readBody(w, r)
	if !ok {
		return nil, "", false
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == joseContentType:
		payload, err := s.Cards.OpenJWS(r.Context(), p, body)
		if err == nil {
			err = utf8Body(payload)
		}
		if err != nil {
			s.writeCardError(w, r, err)
			return nil, "", false
		}
		return payload, "API_JWS", true
	case s.Cards.JWSRequired(p.PartnerID):
		s.writeCardError(w, r, banking.Errorf(banking.KindJWSExpected, "Запрос должен быть подписан JWS (Content-Type: application/jose)"))
		return nil, "", false
	case !acceptsJSONBody(r):
		s.writeCardError(w, r, errNotJSON())
		return nil, "", false
	}
	return body, "API", true
}

func (s *server) createCardLimit(w http.ResponseWriter, r *http.Request) {
	p := principalFrom(r.Context())
	body, channel, ok := s.cardLimitBody(w, r, p)
	if !ok {
		return
	}
	l, err := banking.ParseLimitChange(body)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	out, err := s.Cards.SetLimit(r.Context(), p, l, channel)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// limitExternalID is the path's externalId when it is a UUID; ok is false
// once the error is answered.
func (s *server) limitExternalID(w http.ResponseWriter, r *http.Request) (id string, ok bool) {
	id = r.PathValue("externalId")
	if !banking.IsUUID(id) {
		s.writeCardError(w, r, &banking.Error{Kind: banking.KindValidation, Message: "externalId должен быть UUID",
			FieldNames: []string{"externalId"}, Checks: []string{"uuid"}})
		return "", false
	}
	return id, true
}

// signCardLimit adds signatures to an application not yet in force (ours,
// as the payments' /sign; banking.Cards.SignLimit), with the transport of
// POST …/limits: JSON, or a JWS where the partner must sign.
func (s *server) signCardLimit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.limitExternalID(w, r)
	if !ok {
		return
	}
	p := principalFrom(r.Context())
	body, _, ok := s.cardLimitBody(w, r, p)
	if !ok {
		return
	}
	sigs, err := banking.ParseLimitSignatures(body)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	out, err := s.Cards.SignLimit(r.Context(), p, id, sigs)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) cardLimitState(w http.ResponseWriter, r *http.Request) {
	id, ok := s.limitExternalID(w, r)
	if !ok {
		return
	}
	st, err := s.Cards.LimitState(r.Context(), principalFrom(r.Context()), id)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

type clockReq struct {
	Advance string `json:"advance"` // Go duration: "36h", "90m"
}

type clockRes struct {
	Now string `json:"now"`
}

func (s *server) advanceClock(w http.ResponseWriter, r *http.Request) {
	if !acceptsJSONBody(r) {
		s.writeCardError(w, r, errNotJSON())
		return
	}
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	var req clockReq
	if err := json.Unmarshal(jsonexact.Names(body, &req), &req); err != nil {
		s.writeCardError(w, r, banking.DeserializationFault(body, err))
		return
	}
	d, err := time.ParseDuration(req.Advance)
	if err != nil {
		s.writeCardError(w, r, &banking.Error{Kind: banking.KindValidation, Message: fmt.Sprintf("advance %q: ожидается длительность вида 36h", jsonmsg.Echo(req.Advance)),
			FieldNames: []string{"advance"}, Checks: []string{"duration"}})
		return
	}
	now, err := s.Cards.AdvanceOrgClock(r.Context(), principalFrom(r.Context()), d)
	if err != nil {
		s.writeCardError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, clockRes{Now: now.Format(time.RFC3339)})
}

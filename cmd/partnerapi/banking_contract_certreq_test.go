package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"

	"partnerapi/internal/banking"
	"partnerapi/internal/gost"
)

// sampleCSR is one GOST PKCS#10 request (base64 DER) the contract rows
// send, made once; sampleBadCSR is it with its signature's last byte
// flipped, a request whose signature does not verify.
var sampleCSR = sync.OnceValues(func() (good, bad string) {
	key, err := gost.GenerateKey(gost.TC26256A, rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := gost.CreateCertificateRequest(key, "Иванов Иван Иванович", "A00TEST.ИВАНОВ")
	if err != nil {
		panic(err)
	}
	tampered := append([]byte(nil), der...)
	tampered[len(tampered)-1] ^= 0x01
	return base64.StdEncoding.EncodeToString(der), base64.StdEncoding.EncodeToString(tampered)
})

// certReqBody is a certificate request of the sandbox user with set laid
// over the defaults (nil deletes a member).
func certReqBody(id string, set map[string]any) string {
	good, _ := sampleCSR()
	m := map[string]any{"externalId": id, "number": "1", "userName": "Иванов Иван Иванович", "orgName": "ООО «Песочница»",
		"email": "sandbox@example.com", "userPosition": "Директор", "pkcs10": map[string]any{"bicryptId": "A00TEST.ИВАНОВ", "cms": good}}
	return overlaid(m, set)
}

// certReqEIOBody is certReqBody with the sandbox user's login.
func certReqEIOBody(id string, set map[string]any) string {
	if set == nil {
		set = map[string]any{}
	}
	if _, ok := set["login"]; !ok {
		set["login"] = banking.SandboxUserLogin
	}
	return certReqBody(id, set)
}

// The certificate-request paths of reference §10: creates under /v1 and
// the Node SDK's /v2, and the request's operations under the plain and
// the eio paths.
const (
	certReqV1 = "/fintech/api/v1/crypto/cert-requests"
	certReqV2 = "/fintech/api/v2/crypto/cert-requests"
)

// certRequestCases covers every certificate-request operation and the
// answers the contract documents for each path.
func certRequestCases() []bankCase {
	_, bad := sampleCSR()
	body := func(path, id string, set map[string]any) string {
		if len(path) > 4 && path[len(path)-4:] == "/eio" {
			return certReqEIOBody(id, set)
		}
		return certReqBody(id, set)
	}
	var rows []bankCase
	for i, p := range []string{certReqV1, certReqV2, certReqV1 + "/eio", certReqV2 + "/eio"} {
		id := func(n int) string {
			return "c3000000-0000-4000-8000-00000000" + string(rune('0'+i)) + "00" + string(rune('0'+n))
		}
		rows = append(rows, []bankCase{
			{name: p + " create", method: "POST", path: p, auth: "crypto", body: body(p, id(1), nil), status: 201},
			{name: p + " create with the EIO scope", method: "POST", path: p, auth: "eio", body: body(p, id(2), nil), status: 201},
			{name: p + " create fields missing", method: "POST", path: p, auth: "crypto", body: body(p, id(3), map[string]any{"email": "nope", "userName": nil, "pkcs10": nil}),
				status: 400, cause: "VALIDATION_FAULT", badRequest: true},
			{name: p + " create not JSON", method: "POST", path: p, auth: "crypto", body: `{"externalId":`, status: 400, cause: "DESERIALIZATION_FAULT", badRequest: true},
			{name: p + " create without token", method: "POST", path: p, body: body(p, id(4), nil), status: 401, cause: "UNAUTHORIZED", badRequest: true},
			{name: p + " create without scope", method: "POST", path: p, auth: "pay", body: body(p, id(4), nil), status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
			{name: p + " create over the body limit", method: "POST", path: p, auth: "crypto", body: overLimit(body(p, id(5), nil)), status: 413, cause: "VALIDATION_FAULT"},
			{name: p + " create over the rate limit", server: "limited", method: "POST", path: p, auth: "limited crypto", body: body(p, id(6), nil), status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
			{name: p + " create in maintenance", server: "maint", method: "POST", path: p, auth: "maint crypto", body: body(p, id(6), nil), status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
		}...)
	}
	const (
		plain   = "c3000000-0000-4000-8000-000000000001" // made by the /v1 create row
		unknown = "c3000000-0000-4000-8000-0000000000ff"
	)
	rows = append(rows,
		bankCase{name: "create duplicate externalId", method: "POST", path: certReqV1, auth: "crypto", body: certReqBody(plain, nil), status: 400, cause: "WORKFLOW_FAULT"},
		bankCase{name: "create with a request whose signature fails", method: "POST", path: certReqV1, auth: "crypto",
			body:   certReqBody("c3000000-0000-4000-8000-000000000071", map[string]any{"pkcs10": map[string]any{"bicryptId": "A00TEST.ИВАНОВ", "cms": bad}}),
			status: 400, cause: "SIGN_CHECK_EXCEPTION"},
		bankCase{name: "create email over 254 characters", method: "POST", path: certReqV1, auth: "crypto",
			body:   certReqBody("c3000000-0000-4000-8000-000000000073", map[string]any{"email": strings.Repeat("a", 243) + "@example.com"}),
			status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		bankCase{name: "create blank userName", method: "POST", path: certReqV1, auth: "crypto",
			body: certReqBody("c3000000-0000-4000-8000-000000000074", map[string]any{"userName": ""}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		bankCase{name: "create EIO without login", method: "POST", path: certReqV1 + "/eio", auth: "crypto",
			body: certReqEIOBody("c3000000-0000-4000-8000-000000000075", map[string]any{"login": nil}), status: 400, cause: "VALIDATION_FAULT", badRequest: true},
		bankCase{name: "create EIO for an unknown login", method: "POST", path: certReqV1 + "/eio", auth: "crypto",
			body: certReqEIOBody("c3000000-0000-4000-8000-000000000072", map[string]any{"login": "nobody"}), status: 400, cause: "WORKFLOW_FAULT"},
	)
	// The request's operations, on each path that serves them; every path
	// reads the requests of both kinds.
	type op struct{ method, suffix string }
	for _, base := range []string{certReqV1, certReqV1 + "/eio", certReqV2} {
		ops := []op{{"GET", "/state"}, {"GET", "/print"}, {"POST", "/activate"}}
		if base == certReqV2 {
			ops = []op{{"GET", "/print"}} // the Node SDK prints under /v2
		}
		for _, o := range ops {
			p := func(id string) string { return base + "/" + id + o.suffix }
			rows = append(rows, []bankCase{
				{name: p("{id}") + " unknown", method: o.method, path: p(unknown), auth: "crypto", status: 404, cause: "DATA_NOT_FOUND_EXCEPTION"},
				{name: p("{id}") + " not a uuid", method: o.method, path: p("not-a-uuid"), auth: "crypto", status: 400, cause: "VALIDATION_FAULT"},
				{name: p("{id}") + " without token", method: o.method, path: p(plain), status: 401, cause: "UNAUTHORIZED", badRequest: true},
				{name: p("{id}") + " without scope", method: o.method, path: p(plain), auth: "pay", status: 403, cause: "ACTION_ACCESS_EXCEPTION"},
				{name: p("{id}") + " over the rate limit", server: "limited", method: o.method, path: p(unknown), auth: "limited crypto", status: 429, cause: "TOO_MANY_REQUESTS", warm: true},
				{name: p("{id}") + " in maintenance", server: "maint", method: o.method, path: p(unknown), auth: "maint crypto", status: 503, cause: "UNAVAILABLE_RESOURCE_EXCEPTION"},
			}...)
		}
	}
	// The successes, in the order of the state machine: state, print,
	// state again, activate (each path activates a request of its own),
	// then activating again.
	created := func(i, n int) string {
		return "c3000000-0000-4000-8000-00000000" + string(rune('0'+i)) + "00" + string(rune('0'+n))
	}
	rows = append(rows,
		bankCase{name: "state CREATED", method: "GET", path: certReqV1 + "/" + plain + "/state", auth: "crypto", status: 200},
		bankCase{name: "state eio of a plain request", method: "GET", path: certReqV1 + "/eio/" + plain + "/state", auth: "eio", status: 200},
		bankCase{name: "print", method: "GET", path: certReqV1 + "/" + plain + "/print", auth: "crypto", accept: "application/pdf", status: 200},
		bankCase{name: "print v2", method: "GET", path: certReqV2 + "/" + created(1, 1) + "/print", auth: "crypto", accept: "application/pdf", status: 200},
		bankCase{name: "print eio", method: "GET", path: certReqV1 + "/eio/" + created(2, 1) + "/print", auth: "eio", accept: "*/*", status: 200},
		bankCase{name: "activate", method: "POST", path: certReqV1 + "/" + plain + "/activate", auth: "crypto", status: 201},
		bankCase{name: "activate through eio, as the Java SDK does", method: "POST", path: certReqV1 + "/eio/" + created(1, 1) + "/activate", auth: "crypto", status: 201},
		bankCase{name: "activate again", method: "POST", path: certReqV1 + "/" + plain + "/activate", auth: "crypto", status: 400, cause: "WORKFLOW_FAULT"},
		bankCase{name: "state ACTIVATED", method: "GET", path: certReqV1 + "/" + plain + "/state", auth: "crypto", status: 200},
	)
	return rows
}

// certRequestOperationRows has one request per certificate-request
// operation that would succeed on a whole store, for operationRows.
func certRequestOperationRows() []bankCase {
	const id = "c3000000-0000-4000-8000-000000000e01"
	var rows []bankCase
	for _, p := range []string{certReqV1, certReqV2} {
		rows = append(rows,
			bankCase{name: p + " create", method: "POST", path: p, auth: "crypto", body: certReqBody(id, nil)},
			bankCase{name: p + " create eio", method: "POST", path: p + "/eio", auth: "crypto", body: certReqEIOBody(id, nil)},
			bankCase{name: p + " print", method: "GET", path: p + "/" + id + "/print", auth: "crypto"})
	}
	for _, base := range []string{certReqV1, certReqV1 + "/eio"} {
		rows = append(rows,
			bankCase{name: base + " state", method: "GET", path: base + "/" + id + "/state", auth: "crypto"},
			bankCase{name: base + " activate", method: "POST", path: base + "/" + id + "/activate", auth: "crypto"})
		if base != certReqV1 {
			rows = append(rows, bankCase{name: base + " print", method: "GET", path: base + "/" + id + "/print", auth: "crypto"})
		}
	}
	return rows
}

// certRequestStateOf decodes a state answer.
func certRequestStateOf(b []byte) (banking.CertRequestState, error) {
	var st banking.CertRequestState
	err := json.Unmarshal(b, &st)
	return st, err
}

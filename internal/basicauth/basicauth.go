// Package basicauth reads HTTP Basic credentials (RFC 7617) as the APIs
// that take them share it: the banking token endpoint's
// client_secret_basic and the smart-home API's agent logins. It is a leaf
// package of plain string functions, as package bearer is for bearer
// tokens, so that a domain package and a transport may both import it.
package basicauth

import (
	"encoding/base64"
	"strings"
)

// Credentials returns what follows the Basic scheme in an Authorization
// header: the scheme in any letter case, then one or more spaces, which
// RFC 9110 §11.4 allows (credentials = auth-scheme [ 1*SP token68 ]) and
// http.Request.BasicAuth does not, so a client that sends two is not
// refused with the right password.
func Credentials(header string) (string, bool) {
	const scheme = "Basic"
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) || header[len(scheme)] != ' ' {
		return "", false
	}
	return strings.TrimLeft(header[len(scheme):], " "), true
}

// Parse is http.Request.BasicAuth's parsing but for the spaces after the
// scheme (Credentials): standard Base64, and the user up to the first
// colon.
func Parse(header string) (user, password string, ok bool) {
	cred, ok := Credentials(header)
	if !ok {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(b), ":")
}

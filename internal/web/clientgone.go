package web

import (
	"context"
	"errors"
	"net/http"
)

// StatusClientClosedRequest is nginx's status for a request whose client
// closed the connection before the answer; HTTP defines none. The access
// log and /metrics count such requests under it.
const StatusClientClosedRequest = 499

// ClientGone reports whether err is r's own cancellation: the client hung
// up while its request ran, so a call made with r's context gave up. That
// is no failure of the server's, and no one reads the answer: the APIs
// write StatusClientClosedRequest and no error line, where an unexpected
// error is a 500 with one. A cancellation while the client is still there
// (a deadline of the server's own, say) is not this.
func ClientGone(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && r.Context().Err() != nil
}

package bankapi

import "partnerapi/internal/web"

func (s *server) addCardRoutes(mux *web.Mux) {
}

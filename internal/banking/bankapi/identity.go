package bankapi

import "partnerapi/internal/web"

func (s *server) addIdentityRoutes(mux *web.Mux) {
}

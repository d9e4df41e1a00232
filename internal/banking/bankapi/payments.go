package bankapi

import "partnerapi/internal/web"

func (s *server) addPaymentRoutes(mux *web.Mux) {
}

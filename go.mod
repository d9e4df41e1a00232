module partnerapi

go 1.26.8

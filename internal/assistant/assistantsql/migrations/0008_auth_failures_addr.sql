-- The per-address cap of the token endpoints' throttle
-- (assistant/auththrottle.go) counts one address's failures across every
-- client id: an index led by the address, which the (client_id, addr, at)
-- index of 0007 cannot serve, keeps that count a range scan of at most
-- the cap's rows on every token request.
CREATE INDEX assistant_auth_failures_addr ON assistant_auth_failures (addr, at);

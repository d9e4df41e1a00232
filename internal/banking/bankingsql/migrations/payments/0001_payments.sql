-- Payment documents (issue 4). org_id is TEXT without a foreign key: the
-- identity area owns organisations.
CREATE TABLE banking_payments (
    org_id      TEXT NOT NULL,
    external_id TEXT NOT NULL,
    kind        TEXT NOT NULL,
    doc         TEXT NOT NULL,
    kopecks     BIGINT NOT NULL,
    status      TEXT NOT NULL,
    comment     TEXT NOT NULL,
    roles       TEXT NOT NULL,
    channel     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (org_id, external_id)
);

CREATE TABLE banking_payment_history (
    id          {{autoid}},
    org_id      TEXT NOT NULL,
    external_id TEXT NOT NULL,
    status      TEXT NOT NULL,
    comment     TEXT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX banking_payment_history_doc ON banking_payment_history (org_id, external_id, id);

-- The webhook outbox: a final status is queued in the transaction that sets
-- it, so no final status is ever lost or sent for an unsaved document.
CREATE TABLE banking_payment_webhooks (
    id           {{autoid}},
    org_id       TEXT NOT NULL,
    external_id  TEXT NOT NULL,
    status       TEXT NOT NULL,
    comment      TEXT NOT NULL,
    event_time   BIGINT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    delivered_at BIGINT,
    last_error   TEXT NOT NULL DEFAULT '',
    UNIQUE (org_id, external_id, event_time)
);
CREATE INDEX banking_payment_webhooks_due ON banking_payment_webhooks (delivered_at, next_at);

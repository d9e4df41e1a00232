-- One row: the catalog version every change bumps (ETags derive from it).
CREATE TABLE home_catalog (
    id INTEGER PRIMARY KEY,
    version BIGINT NOT NULL,
    label TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- spec is the feature's JSON (enum, range, colour) as the domain reads it.
CREATE TABLE home_features (
    name TEXT PRIMARY KEY,
    data_type TEXT NOT NULL,
    spec TEXT NOT NULL
);

-- spec holds one-of groups, dependencies and example allowed_values.
CREATE TABLE home_categories (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL
);

CREATE TABLE home_category_features (
    category TEXT NOT NULL REFERENCES home_categories (name),
    position INTEGER NOT NULL,
    feature TEXT NOT NULL REFERENCES home_features (name),
    required INTEGER NOT NULL,
    PRIMARY KEY (category, feature)
);

CREATE TABLE home_models (
    id TEXT PRIMARY KEY,
    category TEXT NOT NULL REFERENCES home_categories (name),
    body TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- secret_hash only: passwords are never stored.
CREATE TABLE home_credentials (
    kind TEXT NOT NULL,
    login TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (kind, login)
);

-- The MQTT gate's leadership (one lease row per topic root: the replica
-- whose holder id it names answers the agents; beat is bumped by every
-- renewal, so the others see a live leader without comparing clocks).
CREATE TABLE home_mqtt_leases (
	root TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	beat BIGINT NOT NULL
);

-- Messages to agents that the admin API of a replica that does not lead
-- relays to the leader: queued, claimed by one leader, done with the
-- leader's answer (topic, or an error's kind and text), or withdrawn by
-- the replica that gave up waiting before any leader claimed it.
CREATE TABLE home_mqtt_relay (
	id {{autoid}},
	root TEXT NOT NULL,
	agent TEXT NOT NULL,
	kind TEXT NOT NULL,
	body {{bytes}} NOT NULL,
	state TEXT NOT NULL,
	topic TEXT NOT NULL DEFAULT '',
	err_kind TEXT NOT NULL DEFAULT '',
	err_text TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL
);
CREATE INDEX home_mqtt_relay_queued ON home_mqtt_relay (root, state, id);

-- The agents a leader heard under each root, so that the next leader asks
-- them for their configs at once instead of learning them one message at
-- a time.
CREATE TABLE home_mqtt_agents (
	root TEXT NOT NULL,
	name TEXT NOT NULL,
	seen_at BIGINT NOT NULL,
	PRIMARY KEY (root, name)
);

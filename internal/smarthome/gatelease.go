package smarthome

import (
	"context"
	"time"
)

// What the MQTT gates of several replicas on one database share, so that
// one of them at a time answers the agents (internal/smarthome/homemqtt,
// leader.go and relay.go): the lease that names the leader of a topic
// root, the messages to agents that another replica's admin API relays to
// the leader, and the agents the leaders heard.

// GateLease is a topic root's leadership as the database holds it: the
// holder's id ("" when the last holder released it, or none ever took it)
// and a counter every take and renewal bumps. A replica judges a lease
// stale by watching the counter stand still on its own clock, never by
// comparing times written by another machine's clock.
type GateLease struct {
	Holder string
	Beat   int64
}

// GateMessage is a message to an agent that the admin API of a replica
// that does not lead queued for the leader; Kind is "commands" or one of
// Send's kinds.
type GateMessage struct {
	ID          int64
	Agent, Kind string
	Body        []byte
}

// GateResult is the leader's answer to a relayed message: the topic it was
// published on, or the error, as its kind (one of the GateErr constants)
// and text.
type GateResult struct {
	Topic   string
	ErrKind string
	ErrText string
}

// The kinds of a relayed message's error, each mapped back to the error
// the admin API answers (homemqtt relay.go).
const (
	GateErrInvalid       = "invalid"        // InvalidError; ErrText is its details, one a line
	GateErrUnknownDevice = "unknown_device" // UnknownDeviceError; ErrText is the device
	GateErrNotFound      = "not_found"      // ErrNotFound
	GateErrDown          = "gate_down"      // ErrGateDown
	GateErrOther         = "other"
)

// GateStore is where the gates of several replicas meet (homesql.Store on
// SQLite or PostgreSQL).
type GateStore interface {
	// GateLease reads root's lease; the zero GateLease when none was taken.
	GateLease(ctx context.Context, root string) (GateLease, error)
	// TakeGateLease makes holder root's leader if the lease is still seen
	// (as GateLease read it): of several that saw it, one takes it.
	TakeGateLease(ctx context.Context, root, holder string, seen GateLease) (bool, error)
	// RenewGateLease bumps the lease's counter while holder holds it;
	// false once another took it.
	RenewGateLease(ctx context.Context, root, holder string) (bool, error)
	// ReleaseGateLease gives the lease up while holder holds it, so that
	// another replica takes it at its next look.
	ReleaseGateLease(ctx context.Context, root, holder string) error

	// QueueGateMessage queues a message for root's leader; it also deletes
	// the relayed messages older than an hour.
	QueueGateMessage(ctx context.Context, root string, m GateMessage, now time.Time) (int64, error)
	// ClaimGateMessages claims up to limit queued messages, oldest first,
	// each for one claimer only.
	ClaimGateMessages(ctx context.Context, root string, limit int) ([]GateMessage, error)
	// FinishGateMessage records a claimed message's result.
	FinishGateMessage(ctx context.Context, id int64, r GateResult) error
	// GateMessageResult reads a message's result; done is false while it
	// is queued or claimed.
	GateMessageResult(ctx context.Context, id int64) (r GateResult, done bool, err error)
	// WithdrawGateMessage takes back a message no leader claimed yet;
	// false when one did (its result then comes).
	WithdrawGateMessage(ctx context.Context, id int64) (bool, error)
	// DeleteGateMessage deletes a relayed message's row whatever its
	// state, once its sender is done waiting for it.
	DeleteGateMessage(ctx context.Context, id int64) error

	// RememberGateAgent records that root's leader heard agent name.
	RememberGateAgent(ctx context.Context, root, name string, now time.Time) error
	// GateAgents is up to limit of the agents heard under root, the most
	// recently heard first.
	GateAgents(ctx context.Context, root string, limit int) ([]string, error)
	// ForgetGateAgents deletes the agents heard under root but the keep
	// most recently heard, which are all that GateAgents gives a leader.
	ForgetGateAgents(ctx context.Context, root string, keep int) error
}

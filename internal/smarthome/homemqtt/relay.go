package homemqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"partnerapi/internal/smarthome"
	"partnerapi/internal/sqldb"
)

// What the admin API sends to agents (commands, the app's changes, error
// reports, config requests) goes out through the leader's gate, whichever
// replica the administrator reached. A replica that does not lead does
// not publish it itself, though it could connect to the broker: each such
// message is checked against, and changes, what the gate keeps of the
// agent (a command against the devices of its config; a config request
// opens the window in which the agent's next config replaces its devices;
// a rename or a move keeps the agent's answer from being taken for that
// config), and only the leader keeps that, since only it hears the
// agent's configs. So the replica queues the message in the database,
// the leader claims it (each message once, by one leader), sends it as
// its own admin API would and writes back the topic or the error, which
// the replica answers with: the administrator sees the same statuses
// from every replica.

// errNotLeading is a message a gate refused because its replica's lease
// may have lapsed; the replica relays it instead (Replica send).
var errNotLeading = errors.New("homemqtt: this replica no longer leads the MQTT gate")

// ErrNoLeader is a message to an agent that no leader claimed in time:
// the leadership is changing hands (a leader that died is replaced within
// about its lease), or no replica can reach the broker. Nothing was sent.
var ErrNoLeader error = &brokerError{msg: "no replica leads the MQTT gate at the moment (one is taking over, or none reaches the broker): nothing was sent to the agent; send it again"}

// errNoAnswer is a relayed message a leader claimed but answered nothing
// about in time: it died or lost its lease while sending it.
var errNoAnswer error = &brokerError{msg: "the replica leading the MQTT gate took the message but gave no answer in time (it stopped or lost its lease): the agent may or may not have got it; send it again if the agent did not act on it"}

// How the relay waits: a leader looks for relayed messages every
// relayPoll; a replica waits relayClaimWait for a leader to claim its
// message, which spans a leader's clean handover, then withdraws it, and
// once claimed waits relayAnswerWait for the answer (the leader's own
// wait for the broker, commandWait, and then some).
const (
	relayPoll       = 100 * time.Millisecond
	relayClaimWait  = 5 * time.Second
	relayAnswerWait = commandWait + 5*time.Second
	relayBatch      = 16
)

// Command sends a command to an agent through the leader's gate (Gate
// Command), from this replica's gate while it leads, else relayed.
func (r *Replica) Command(ctx context.Context, agent string, msg []byte) (string, error) {
	return r.send(ctx, agent, "commands", msg)
}

// Send sends one of the app's messages to an agent through the leader's
// gate (Gate Send), from this replica's gate while it leads, else relayed.
func (r *Replica) Send(ctx context.Context, agent, kind string, msg []byte) (string, error) {
	return r.send(ctx, agent, kind, msg)
}

func (r *Replica) send(ctx context.Context, agent, kind string, msg []byte) (string, error) {
	if g := r.gate.Load(); g != nil && r.Leading() {
		topic, err := sendThrough(ctx, g, agent, kind, msg)
		if !errors.Is(err, errNotLeading) {
			return topic, err
		}
		// The lease lapsed while the message was checked: the next leader
		// sends it.
	}
	return r.relay(ctx, agent, kind, msg)
}

// sendThrough sends a message through g as the admin API asked.
func sendThrough(ctx context.Context, g *Gate, agent, kind string, msg []byte) (string, error) {
	if kind == "commands" {
		return g.Command(ctx, agent, msg)
	}
	return g.Send(ctx, agent, kind, msg)
}

// relay queues the message for the leader and waits for its answer.
func (r *Replica) relay(ctx context.Context, agent, kind string, msg []byte) (string, error) {
	s := r.cfg.Store
	id, err := s.QueueGateMessage(ctx, r.cfg.Gate.Root, smarthome.GateMessage{Agent: agent, Kind: kind, Body: msg}, time.Now())
	if err != nil {
		return "", err
	}
	// The waits go on when the administrator's request ends: a message
	// claimed is being sent, and one not yet claimed must be withdrawn.
	wctx := context.WithoutCancel(ctx)
	// Its row serves this wait alone: once answered, withdrawn or given up
	// on it goes, so that the table holds the messages under way, not an
	// hour of them (QueueGateMessage's sweep is left for the rows of a
	// replica that stopped while it waited). A leader that answers after
	// the row went finds none to update, which is what the sender, gone
	// with errNoAnswer, expects.
	defer func() {
		dctx, cancel := context.WithTimeout(wctx, catalogTimeout)
		defer cancel()
		if err := s.DeleteGateMessage(dctx, id); err != nil {
			r.log.Debug("smarthome mqtt: a relayed message's row could not be deleted; the hourly sweep deletes it", "err", err)
		}
	}()
	claimBy := time.Now().Add(relayClaimWait)
	answerBy := time.Now().Add(relayClaimWait + relayAnswerWait)
	for {
		res, done, err := s.GateMessageResult(wctx, id)
		if err == nil && done {
			return res.Topic, resultError(res)
		}
		now := time.Now()
		if now.After(claimBy) || ctx.Err() != nil {
			claimBy = answerBy // withdraw once
			withdrawn, werr := s.WithdrawGateMessage(wctx, id)
			if werr == nil && withdrawn {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", ErrNoLeader
			}
		}
		if now.After(answerBy) {
			return "", errNoAnswer
		}
		time.Sleep(relayPoll / 2)
	}
}

// serveRelay sends, while ctx lasts, the messages other replicas relayed.
// Each is sent on a goroutine of its own, as the admin API's requests
// would be: one waiting for the broker holds back no other.
func (r *Replica) serveRelay(ctx context.Context, g *Gate) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(relayPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !r.Leading() {
			continue
		}
		var claimed []smarthome.GateMessage
		_, err := r.bounded(func(bctx context.Context) (_ bool, err error) {
			claimed, err = r.cfg.Store.ClaimGateMessages(bctx, r.cfg.Gate.Root, relayBatch)
			return false, err
		})
		if err != nil {
			r.log.Debug("smarthome mqtt: relayed messages cannot be read", "err", err)
		}
		for _, m := range claimed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				topic, err := sendThrough(ctx, g, m.Agent, m.Kind, m.Body)
				if errors.Is(err, errNotLeading) {
					err = errNoAnswer
				}
				res := resultOf(topic, err)
				fctx, cancel := context.WithTimeout(context.Background(), relayAnswerWait)
				defer cancel()
				if err := r.cfg.Store.FinishGateMessage(fctx, m.ID, res); err != nil {
					r.log.Warn("smarthome mqtt: the answer to a relayed message could not be recorded", "agent", loggedName(m.Agent), "err", err)
				}
			}()
		}
	}
}

// resultOf is a send's outcome as the database keeps it for the replica
// that relayed it.
func resultOf(topic string, err error) smarthome.GateResult {
	var inv *smarthome.InvalidError
	var dev *smarthome.UnknownDeviceError
	switch {
	case err == nil:
		return smarthome.GateResult{Topic: topic}
	case errors.As(err, &inv):
		b, _ := json.Marshal(inv.Details)
		return smarthome.GateResult{ErrKind: smarthome.GateErrInvalid, ErrText: string(b)}
	case errors.As(err, &dev):
		return smarthome.GateResult{ErrKind: smarthome.GateErrUnknownDevice, ErrText: dev.Device}
	case errors.Is(err, smarthome.ErrNotFound):
		return smarthome.GateResult{ErrKind: smarthome.GateErrNotFound, ErrText: err.Error()}
	case errors.Is(err, smarthome.ErrGateDown), sqldb.Unavailable(err):
		// A leader that cannot read the catalog is a gate that cannot
		// send for the moment, as one whose broker is away.
		return smarthome.GateResult{ErrKind: smarthome.GateErrDown, ErrText: err.Error()}
	default:
		return smarthome.GateResult{ErrKind: smarthome.GateErrOther, ErrText: err.Error()}
	}
}

// resultError is the error a relayed message's result stands for, of the
// type the admin API maps to the status the leader's own API answers.
func resultError(res smarthome.GateResult) error {
	switch res.ErrKind {
	case "":
		return nil
	case smarthome.GateErrInvalid:
		var details []string
		_ = json.Unmarshal([]byte(res.ErrText), &details)
		return &smarthome.InvalidError{Details: details}
	case smarthome.GateErrUnknownDevice:
		return &smarthome.UnknownDeviceError{Device: res.ErrText}
	case smarthome.GateErrNotFound:
		return fmt.Errorf("%s (answered by the leading replica): %w", res.ErrText, smarthome.ErrNotFound)
	case smarthome.GateErrDown:
		return &brokerError{msg: res.ErrText}
	default:
		return fmt.Errorf("the leading replica could not send the message: %s", res.ErrText)
	}
}

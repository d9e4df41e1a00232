package homesql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"partnerapi/internal/smarthome"
)

var _ smarthome.GateStore = (*Store)(nil)

// The MQTT gates' meeting place (smarthome.GateStore, migration 0003).
// Every statement is a single row's compare-and-set, so that of two
// replicas racing for a lease or a relayed message exactly one wins on
// SQLite and PostgreSQL alike, without locks held across round trips.

// GateLease implements smarthome.GateStore.
func (s *Store) GateLease(ctx context.Context, root string) (smarthome.GateLease, error) {
	var l smarthome.GateLease
	err := s.db.W.QueryRowContext(ctx, `SELECT holder, beat FROM home_mqtt_leases WHERE root = $1`, root).Scan(&l.Holder, &l.Beat)
	if errors.Is(err, sql.ErrNoRows) {
		return smarthome.GateLease{}, nil
	}
	if err != nil {
		return l, fmt.Errorf("gate lease: %w", err)
	}
	return l, nil
}

// TakeGateLease implements smarthome.GateStore.
func (s *Store) TakeGateLease(ctx context.Context, root, holder string, seen smarthome.GateLease) (bool, error) {
	var res sql.Result
	var err error
	if seen.Beat == 0 {
		// No row yet: the first insert wins, the others' conflict.
		res, err = s.db.W.ExecContext(ctx, `INSERT INTO home_mqtt_leases (root, holder, beat) VALUES ($1, $2, 1)
			ON CONFLICT (root) DO NOTHING`, root, holder)
	} else {
		res, err = s.db.W.ExecContext(ctx, `UPDATE home_mqtt_leases SET holder = $1, beat = beat + 1
			WHERE root = $2 AND holder = $3 AND beat = $4`, holder, root, seen.Holder, seen.Beat)
	}
	if err != nil {
		return false, fmt.Errorf("take gate lease: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RenewGateLease implements smarthome.GateStore.
func (s *Store) RenewGateLease(ctx context.Context, root, holder string) (bool, error) {
	res, err := s.db.W.ExecContext(ctx, `UPDATE home_mqtt_leases SET beat = beat + 1 WHERE root = $1 AND holder = $2`, root, holder)
	if err != nil {
		return false, fmt.Errorf("renew gate lease: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleaseGateLease implements smarthome.GateStore.
func (s *Store) ReleaseGateLease(ctx context.Context, root, holder string) error {
	_, err := s.db.W.ExecContext(ctx, `UPDATE home_mqtt_leases SET holder = '', beat = beat + 1 WHERE root = $1 AND holder = $2`, root, holder)
	if err != nil {
		return fmt.Errorf("release gate lease: %w", err)
	}
	return nil
}

// relayKept is how long relayed messages stay: their senders wait seconds.
const relayKept = time.Hour

// QueueGateMessage implements smarthome.GateStore.
func (s *Store) QueueGateMessage(ctx context.Context, root string, m smarthome.GateMessage, now time.Time) (int64, error) {
	var id int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM home_mqtt_relay WHERE created_at < $1`, now.Add(-relayKept).UnixMicro()); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO home_mqtt_relay (root, agent, kind, body, state, created_at)
			VALUES ($1, $2, $3, $4, 'queued', $5) RETURNING id`, root, m.Agent, m.Kind, m.Body, now.UnixMicro()).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("queue gate message: %w", err)
	}
	return id, nil
}

// ClaimGateMessages implements smarthome.GateStore.
func (s *Store) ClaimGateMessages(ctx context.Context, root string, limit int) ([]smarthome.GateMessage, error) {
	rows, err := s.db.W.QueryContext(ctx, `SELECT id, agent, kind, body FROM home_mqtt_relay
		WHERE root = $1 AND state = 'queued' ORDER BY id LIMIT $2`, root, limit)
	if err != nil {
		return nil, fmt.Errorf("read gate messages: %w", err)
	}
	var queued []smarthome.GateMessage
	for rows.Next() {
		var m smarthome.GateMessage
		if err := rows.Scan(&m.ID, &m.Agent, &m.Kind, &m.Body); err != nil {
			rows.Close()
			return nil, err
		}
		queued = append(queued, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var claimed []smarthome.GateMessage
	for _, m := range queued {
		// The sender's withdrawal and another claimer race for the same
		// row: whoever moves it from queued has it.
		res, err := s.db.W.ExecContext(ctx, `UPDATE home_mqtt_relay SET state = 'claimed' WHERE id = $1 AND state = 'queued'`, m.ID)
		if err != nil {
			return claimed, fmt.Errorf("claim gate message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			claimed = append(claimed, m)
		}
	}
	return claimed, nil
}

// FinishGateMessage implements smarthome.GateStore.
func (s *Store) FinishGateMessage(ctx context.Context, id int64, r smarthome.GateResult) error {
	_, err := s.db.W.ExecContext(ctx, `UPDATE home_mqtt_relay SET state = 'done', topic = $1, err_kind = $2, err_text = $3
		WHERE id = $4 AND state = 'claimed'`, r.Topic, r.ErrKind, r.ErrText, id)
	if err != nil {
		return fmt.Errorf("finish gate message: %w", err)
	}
	return nil
}

// GateMessageResult implements smarthome.GateStore.
func (s *Store) GateMessageResult(ctx context.Context, id int64) (smarthome.GateResult, bool, error) {
	var r smarthome.GateResult
	var state string
	err := s.db.W.QueryRowContext(ctx, `SELECT state, topic, err_kind, err_text FROM home_mqtt_relay WHERE id = $1`, id).
		Scan(&state, &r.Topic, &r.ErrKind, &r.ErrText)
	if err != nil {
		return r, false, fmt.Errorf("gate message result: %w", err)
	}
	return r, state == "done", nil
}

// WithdrawGateMessage implements smarthome.GateStore.
func (s *Store) WithdrawGateMessage(ctx context.Context, id int64) (bool, error) {
	res, err := s.db.W.ExecContext(ctx, `UPDATE home_mqtt_relay SET state = 'withdrawn' WHERE id = $1 AND state = 'queued'`, id)
	if err != nil {
		return false, fmt.Errorf("withdraw gate message: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DeleteGateMessage implements smarthome.GateStore.
func (s *Store) DeleteGateMessage(ctx context.Context, id int64) error {
	if _, err := s.db.W.ExecContext(ctx, `DELETE FROM home_mqtt_relay WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete gate message: %w", err)
	}
	return nil
}

// RememberGateAgent implements smarthome.GateStore.
func (s *Store) RememberGateAgent(ctx context.Context, root, name string, now time.Time) error {
	_, err := s.db.W.ExecContext(ctx, `INSERT INTO home_mqtt_agents (root, name, seen_at) VALUES ($1, $2, $3)
		ON CONFLICT (root, name) DO UPDATE SET seen_at = excluded.seen_at`, root, name, now.Unix())
	if err != nil {
		return fmt.Errorf("remember gate agent: %w", err)
	}
	return nil
}

// ForgetGateAgents implements smarthome.GateStore.
func (s *Store) ForgetGateAgents(ctx context.Context, root string, keep int) error {
	_, err := s.db.W.ExecContext(ctx, `DELETE FROM home_mqtt_agents WHERE root = $1 AND name NOT IN
		(SELECT name FROM home_mqtt_agents WHERE root = $1 ORDER BY seen_at DESC, name LIMIT $2)`, root, keep)
	if err != nil {
		return fmt.Errorf("forget gate agents: %w", err)
	}
	return nil
}

// GateAgents implements smarthome.GateStore.
func (s *Store) GateAgents(ctx context.Context, root string, limit int) ([]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT name FROM home_mqtt_agents WHERE root = $1 ORDER BY seen_at DESC, name LIMIT $2`, root, limit)
	if err != nil {
		return nil, fmt.Errorf("gate agents: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

package banking

import (
	"context"
	"sync"
	"time"
)

// Contours the service runs in (reference §1): only the sandbox may move
// its clock.
const (
	ContourSandbox    = "sandbox"
	ContourTest       = "test"
	ContourProduction = "production"
)

// DefaultBankZone is the bank's time zone when none is configured: limit
// expiry follows the bank's calendar day, not the partner's or UTC.
const DefaultBankZone = "Europe/Moscow"

// defaultBankLocation is DefaultBankZone loaded once. Where the system has
// no time zone database it is Moscow's fixed UTC+3, which the zone has kept
// without daylight saving since 2014, so document dates still follow the
// bank's calendar rather than UTC.
var defaultBankLocation = sync.OnceValue(func() *time.Location {
	if loc, err := time.LoadLocation(DefaultBankZone); err == nil {
		return loc
	}
	return time.FixedZone("MSK", 3*60*60)
})

// BankDate is the bank's calendar date at t in loc (nil: DefaultBankZone)
// as midnight UTC, the form ParseDate gives a document date, so the two
// compare directly. A document's date is the bank's local date: at 00:30
// in Moscow a document dated that day is today's, though UTC is still on
// the day before.
func BankDate(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = defaultBankLocation()
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}

// maxClockStep bounds one sandbox clock advance so a typo cannot push the
// sandbox past every card's expiry.
const maxClockStep = 366 * 24 * time.Hour

// Now is the bank's current time for organisation orgID: the wall clock
// plus, in the sandbox, the offsets clock advances accumulated, the shared
// one (`banking clock advance`, the operator's) and the organisation's own
// (POST /fintech/api/sandbox/clock); orgID "" is the shared clock alone.
// The offsets live in the store so the CLI and every server process see
// the same time.
func (c *Cards) Now(ctx context.Context, orgID string) (time.Time, error) {
	now := c.wall()
	if c.cfg.Contour != ContourSandbox {
		return now, nil
	}
	off, err := c.store.ClockOffset(ctx, orgID)
	if err != nil {
		return time.Time{}, err
	}
	return now.Add(off), nil
}

// AdvanceClock moves the whole sandbox's clock forward by d, for every
// organisation, and returns the new shared time: the operator's command.
// Refused outside the sandbox: real limits must expire on real days.
func (c *Cards) AdvanceClock(ctx context.Context, d time.Duration) (time.Time, error) {
	if err := c.checkClockStep(d); err != nil {
		return time.Time{}, err
	}
	if err := c.store.AddClockOffset(ctx, d); err != nil {
		return time.Time{}, err
	}
	return c.Now(ctx, "")
}

// AdvanceOrgClock moves the sandbox clock of p's organisation alone
// forward by d and returns its new time. A partner asks it with no more
// than BUSINESS_CARD_LIMIT, so it must not reach other tenants: moving the
// shared clock would expire every organisation's card limits.
func (c *Cards) AdvanceOrgClock(ctx context.Context, p Principal, d time.Duration) (time.Time, error) {
	if err := c.checkClockStep(d); err != nil {
		return time.Time{}, err
	}
	if err := c.store.AddOrgClockOffset(ctx, p.OrgID, d); err != nil {
		return time.Time{}, err
	}
	return c.Now(ctx, p.OrgID)
}

// checkClockStep refuses a clock move outside the sandbox or out of bounds.
func (c *Cards) checkClockStep(d time.Duration) error {
	if c.cfg.Contour != ContourSandbox {
		return Errorf(KindForbidden, "Сдвиг часов доступен только в песочнице (контур %s)", c.cfg.Contour)
	}
	if d <= 0 || d > maxClockStep {
		return &Error{Kind: KindValidation, Message: "Сдвиг часов должен быть положительным и не больше 366 дней",
			FieldNames: []string{"advance"}, Checks: []string{"0 < advance <= 8784h"}}
	}
	return nil
}

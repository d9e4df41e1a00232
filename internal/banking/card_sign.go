package banking

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"

	"partnerapi/internal/jsonexact"
	"partnerapi/internal/jsonmsg"
)

// The later signing of a card-limit application (our operation, as the
// payments' /sign is): CREATED → PARTSIGNED → EXPORTED, where an
// organisation that needs a first and a second signer collects them one
// request at a time. Creation is card_service.go (SetLimit).

// ParseLimitSignatures decodes a limit sign body, {"digestSignatures":
// [...]}: wrong JSON is DESERIALIZATION_FAULT, a missing or empty list
// VALIDATION_FAULT naming it. More than two signatures are the verifier's
// WORKFLOW_FAULT, as at creation (reference §7).
func ParseLimitSignatures(body []byte) ([]DigestSignature, error) {
	var b struct {
		DigestSignatures []DigestSignature `json:"digestSignatures"`
	}
	dec := json.NewDecoder(bytes.NewReader(jsonexact.Names(body, &b)))
	if err := dec.Decode(&b); err != nil {
		e := DeserializationFault(body, err)
		e.Message = "Тело запроса не соответствует формату JSON: " + jsonmsg.Echo(err.Error())
		return nil, e
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Kind: KindDeserialization, Message: "После объекта JSON есть лишние данные", Fields: []string{}}
	}
	if len(b.DigestSignatures) == 0 {
		return nil, &Error{Kind: KindValidation, Message: "Нужна хотя бы одна подпись",
			FieldNames: []string{"digestSignatures"}, Checks: []string{"от 1 до 2 элементов"}}
	}
	return b.DigestSignatures, nil
}

// SignLimit adds signatures to a limit application of the principal's
// organisation that is not yet in force: CREATED → PARTSIGNED with one of
// first/second, → EXPORTED once the set is complete, in force from that
// moment: its expiry (LimitExpiry) counts from now, and as the application
// put in force last it is the card's limit (EffectiveLimit). The roles
// already collected count; a role twice, or a sole-authority or qualified
// signature together with any other, is refused as at creation, and so is
// another user's certificate (Verify, not VerifyDocument: SetLimit refuses
// it with SIGN_CHECK_EXCEPTION rather than storing an application that
// later fails). The card is checked as at creation: the partner's offer,
// the organisation's setting, a status that takes a limit.
//
// externalID is the partner's spelling, which the digest the signers sign
// carries (DigestFormat.Limit), as at creation; the store finds the
// application whatever its case.
func (c *Cards) SignLimit(ctx context.Context, p Principal, externalID string, sigs []DigestSignature) (LimitChange, error) {
	l, err := c.store.Limit(ctx, p.OrgID, externalID)
	if KindOf(err) == KindDataNotFound {
		// A partner without any offer is refused whether or not the
		// application exists, as LimitState refuses it: its 404 told such
		// a partner which externalIds the organisation had used.
		if ok, oerr := c.anyOffer(ctx, p); oerr != nil {
			return LimitChange{}, oerr
		} else if !ok {
			return LimitChange{}, errNoOffer()
		}
	}
	if err != nil {
		return LimitChange{}, err
	}
	l.ExternalID = externalID
	// The partner and its offer on the card come before anything the
	// application's status says: answered first, the status refusal told a
	// partner without an offer (or without one on the card's account) that
	// the application was in force.
	if err := c.cardTakesLimit(ctx, p, l.BusinessCardID); err != nil {
		return LimitChange{}, err
	}
	if l.BankStatus != LimitCreated && l.BankStatus != LimitPartSigned {
		return LimitChange{}, Errorf(KindWorkflow, "Заявку в статусе %s нельзя подписать", l.BankStatus)
	}
	if l.BankStatus == LimitPartSigned && len(l.Roles) == 0 {
		// Stored before roles were (cards migration 0005) outside the
		// sandbox: which signer it still needs is not known here.
		return LimitChange{}, Errorf(KindWorkflow, "Роль подписи заявки %s не сохранена: подайте новую заявку", externalID)
	}
	if c.verifier == nil {
		return LimitChange{}, Errorf(KindSignCheck, "Проверка подписи недоступна")
	}
	set, err := c.verifier.Verify(ctx, p, c.cfg.Digest.Limit(l), sigs)
	if err != nil {
		return LimitChange{}, err
	}
	roles := slices.Clone(l.Roles)
	for _, r := range set.Roles {
		if slices.Contains(roles, r) {
			return LimitChange{}, Errorf(KindWorkflow, "Заявка уже подписана подписью %s", r)
		}
		roles = append(roles, r)
	}
	// The verifier saw only this call's signatures; the set the
	// application ends up with obeys the same rules (reference §9.1).
	all := SignatureSet{Roles: roles}
	if len(roles) > 1 && (all.Has(RoleSoleAuthority) || all.Has(RoleQualified)) {
		return LimitChange{}, Errorf(KindWorkflow, "Подпись единоличного органа или УКЭП не может сочетаться с другими подписями")
	}
	now, err := c.Now(ctx, p.OrgID)
	if err != nil {
		return LimitChange{}, err
	}
	from, fromRoles := l.BankStatus, l.Roles
	l.Roles, l.DigestSignatures = roles, append(slices.Clone(l.DigestSignatures), sigs...)
	switch {
	case all.Complete():
		l.BankStatus, l.ExportedAt = LimitExported, now
		l.ExpiresAt = LimitExpiry(string(l.Limit), now, c.cfg.Location)
	case all.Partial():
		l.BankStatus = LimitPartSigned
	default:
		return LimitChange{}, Errorf(KindWorkflow, "Набор подписей не позволяет исполнить заявку: проверьте сертификаты")
	}
	if err := c.store.SignLimit(ctx, l, from, fromRoles); err != nil {
		return LimitChange{}, err
	}
	return l, nil
}

package banking

import (
	"context"
	"slices"
)

// The signing side of a stored document: the digest its signers sign and the
// later signing of a draft (reference §4.1, §6); creation is payment_service.go.

// Digest returns the text the document's signers sign. payerAccount, for a
// draft from an invoice that names no payer yet, gives the digest of the
// draft completed with that account as /sign will complete it
// (completeDraftPayer), which is what its signatures must cover; the
// stored draft is not changed.
func (s *PaymentService) Digest(ctx context.Context, p Principal, externalID, payerAccount string) (string, error) {
	if err := payerAccountFormat(payerAccount); err != nil {
		return "", err
	}
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return "", err
	}
	if payerAccount != "" {
		if _, err := s.completeDraftPayer(ctx, p, &sp.Doc, payerAccount); err != nil {
			return "", err
		}
	}
	return s.Config.Digest.Payment(&sp.Doc), nil
}

// Sign adds signatures to a draft: CREATED → PARTSIGNED with one of
// first/second, → signed and processed once the set is complete. The roles
// already collected count; a role twice, or a sole-authority or qualified
// signature together with any other, is refused like at creation. A
// signature with another user's certificate is accepted and ends the
// document in INVALIDEDS, as at creation (foreignSignatureHistory). A draft
// from an invoice without a payer takes payerAccount, whose details
// complete it before its digest is signed (completeDraftPayer); "" for
// every other document.
func (s *PaymentService) Sign(ctx context.Context, p Principal, externalID string, sigs []DigestSignature, payerAccount string) (*Payment, error) {
	// No signature at all is a malformed request. More than two is a
	// signature-set violation, which the verifier answers with
	// WORKFLOW_FAULT as at creation (reference §7).
	if len(sigs) == 0 {
		return nil, &Error{Kind: KindValidation, Message: "Нужна хотя бы одна подпись",
			FieldNames: []string{"digestSignatures"}, Checks: []string{"от 1 до 2 элементов"}}
	}
	if err := payerAccountFormat(payerAccount); err != nil {
		return nil, err
	}
	sp, err := s.Store.GetPayment(ctx, p.OrgID, externalID)
	if err != nil {
		return nil, err
	}
	if !Signable(sp.Status) {
		return nil, Errorf(KindWorkflow, "Документ в статусе %s нельзя подписать", sp.Status)
	}
	if s.expired(&sp.Doc) {
		return nil, Errorf(KindWorkflow, "Документ нельзя подписать: срок его подтверждения (expirationDate) истёк %s", sp.Doc.ExpirationDate)
	}
	if s.lapsed(&sp.Doc) {
		return nil, Errorf(KindWorkflow, "Документ нельзя подписать: срок действия документа (date %s, 10 дней) истёк", sp.Doc.Date)
	}
	completed, err := s.completeDraftPayer(ctx, p, &sp.Doc, payerAccount)
	if err != nil {
		return nil, err
	}
	if err := s.signablePayer(ctx, p, &sp.Doc); err != nil {
		return nil, err
	}
	set, err := s.Verifier.VerifyDocument(ctx, p, s.Config.Digest.Payment(&sp.Doc), sigs)
	if err != nil {
		return nil, err
	}
	roles := slices.Clone(sp.Roles)
	for _, r := range set.Roles {
		if slices.Contains(roles, r) {
			return nil, Errorf(KindWorkflow, "Документ уже подписан подписью %s", r)
		}
		roles = append(roles, r)
	}
	// The verifier saw only this call's signatures; the set the document
	// ends up with must obey the same rules (§9.1): a sole-authority or a
	// qualified signature is valid only alone, so neither joins a partly
	// signed document.
	all := SignatureSet{Roles: roles}
	if len(roles) > 1 && (all.Has(RoleSoleAuthority) || all.Has(RoleQualified)) {
		return nil, Errorf(KindWorkflow, "Подпись единоличного органа или УКЭП не может сочетаться с другими подписями")
	}
	now := s.now()
	var history []StatusChange
	switch {
	case all.Partial() && sp.Status == StatusPartSigned:
		return nil, Errorf(KindWorkflow, "Документ уже частично подписан этой подписью")
	case !all.Complete() && !all.Partial():
		return nil, Errorf(KindWorkflow, "Набор подписей не позволяет исполнить документ: проверьте сертификаты")
	case set.Foreign != nil:
		all.Foreign = set.Foreign
		history = foreignSignatureHistory(now, all, sp.Status)
	case all.Complete():
		history = s.processingOf(&sp.Doc, now)
	default: // all.Partial()
		history = []StatusChange{{Status: StatusPartSigned, At: now}}
	}
	sp, err = s.advanceSigned(ctx, p, externalID, sp, completed, roles, history)
	if err != nil {
		return nil, err
	}
	return s.view(sp), nil
}

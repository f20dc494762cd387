package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

func (r auditRow) event() resources.AuditEvent {
	return resources.AuditEvent{ID: r.ID, OccurredAt: r.OccurredAt, Actor: r.Actor, Action: r.Action,
		EntityType: r.EntityType, EntityID: r.EntityID, AuthKind: r.AuthKind, TokenID: r.TokenID,
		RequestID: r.RequestID, SourceIP: r.SourceIP, BeforeState: r.BeforeState, AfterState: r.AfterState}
}

// GetAuditEvent reads one event.
func (s *Store) GetAuditEvent(ctx context.Context, id int64) (*resources.AuditEvent, error) {
	var r auditRow
	if err := s.db.NewSelect().Model(&r).Where("id = ?", id).Scan(ctx); err != nil {
		if noRows(err) {
			return nil, resources.NotFound(resources.CodeAuditEventNotFound, "no audit event %d", id)
		}
		return nil, err
	}
	e := r.event()
	return &e, nil
}

// ListAuditEvents lists events newest first by (occurred_at, id), one keyset
// page; the key is the last row's occurred_at (RFC 3339, nanoseconds) and id.
func (s *Store) ListAuditEvents(ctx context.Context, f resources.AuditFilter, q resources.PageQuery) (resources.Page[resources.AuditEvent], error) {
	sel := s.db.NewSelect().Model((*auditRow)(nil)).OrderExpr("occurred_at DESC, id DESC")
	for col, v := range map[string]string{"actor": f.Actor, "action": f.Action, "entity_type": f.EntityType} {
		if v != "" {
			sel.Where("? = ?", bun.Ident(col), v)
		}
	}
	switch {
	case f.EntityID != "" && f.MaskLicenceSerials:
		sel.Where(`CASE WHEN entity_type = ? THEN coalesce('****-****-****' || substring(entity_id from '-[^-]*$'), '****')
			ELSE entity_id END = ?`, resources.EntityTypeLicence, f.EntityID)
	case f.EntityID != "":
		sel.Where("entity_id = ?", f.EntityID)
	}
	if f.Since != nil {
		sel.Where("occurred_at >= ?", *f.Since)
	}
	if f.Until != nil {
		sel.Where("occurred_at < ?", *f.Until)
	}
	if q.After != nil {
		at, id, err := timeIDKey(q.After)
		if err != nil {
			return resources.Page[resources.AuditEvent]{}, errBadKey
		}
		sel.Where("(occurred_at, id) < (?, ?)", at, id)
	}
	return scanPage(ctx, sel, q.Limit, auditRow.event, func(e resources.AuditEvent) []string {
		return []string{e.OccurredAt.UTC().Format(time.RFC3339Nano), idString(e.ID)}
	})
}

package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"platformapi/resources"
)

// AuditEvent is one recorded change.
type AuditEvent struct {
	ID          string         `json:"id" doc:"Positive integer in a string; grows with time but is not a clock"`
	OccurredAt  time.Time      `json:"occurred_at"`
	Actor       string         `json:"actor" doc:"The person's e-mail at the time, or system, pipeline:RUN, ops:SCRIPT"`
	Action      string         `json:"action" example:"api_token.create"`
	EntityType  string         `json:"entity_type" example:"api_token"`
	EntityID    *string        `json:"entity_id" nullable:"true"`
	AuthKind    *string        `json:"auth_kind" nullable:"true" doc:"session, pat or service_account, …"`
	TokenID     *string        `json:"token_id" nullable:"true"`
	RequestID   *string        `json:"request_id" nullable:"true"`
	SourceIP    *string        `json:"source_ip" nullable:"true"`
	BeforeState map[string]any `json:"before_state" nullable:"true" doc:"Entity before the change, secret-looking members null; null on a create"`
	AfterState  map[string]any `json:"after_state" nullable:"true" doc:"Entity after the change, secret-looking members null; null on a delete"`
}

// ListAuditInput filters the audit log.
type ListAuditInput struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Page size, 1 to 500."`
	Cursor string `query:"cursor" maxLength:"2048" doc:"next_cursor of the previous page."`
	FieldsParam
	Actor      string    `query:"actor" maxLength:"320" doc:"Exact actor"`
	Action     string    `query:"action" maxLength:"120" doc:"Exact action"`
	EntityType string    `query:"entity_type" maxLength:"120" doc:"Exact entity type"`
	EntityID   string    `query:"entity_id" maxLength:"200" doc:"Exact entity id"`
	Since      time.Time `query:"since" maxLength:"40" doc:"Only events at or after this moment (RFC 3339)"`
	Until      time.Time `query:"until" maxLength:"40" doc:"Only events before this moment (RFC 3339)"`
}

// page returns the paging arguments of the audit log.
func (in ListAuditInput) page() pageArgs {
	return pageArgs{Limit: in.Limit, Cursor: in.Cursor, Fields: in.Fields}
}

// AuditEventIDInput names one event.
type AuditEventIDInput struct {
	EventID string `path:"event_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Audit event id"`
}

// AuditEventOutput is one event.
type AuditEventOutput struct{ Body AuditEvent }

var auditKeys = []string{resources.PermAuditRead}

func (s *Server) registerAudit() {
	Register(s.api, Op{ID: "list-audit-events", Toolset: ToolsetAudit, Method: http.MethodGet, Path: "/audit-events", Tags: []string{"Audit"},
		Summary: "List audit events", Permissions: auditKeys, Errors: []int{http.StatusBadRequest},
		Description: "Recorded changes, newest first (by occurred_at, then id). Filters are exact and combine. " +
			"Licence serials (entity type licence) are masked unless the caller holds licence-admin-global; " +
			"entity_id then matches the masked form.",
		Notes: "filters `actor`, `action`, `entity_type`, `entity_id`, `since`, `until`; " +
			"newest first; `limit` ≤ 500",
	}, s.listAudit)
	Register(s.api, Op{ID: "get-audit-event", Toolset: ToolsetAudit, Method: http.MethodGet, Path: "/audit-events/{event_id}", Tags: []string{"Audit"},
		Summary: "Read an audit event", Permissions: auditKeys, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One recorded change: who made it, when, from where, and the state before and after.",
		Notes:       "404 `audit_event_not_found`",
	}, func(ctx context.Context, in *AuditEventIDInput) (*AuditEventOutput, error) {
		e, err := s.svc.Audit.GetAuditEvent(ctx, parseID(in.EventID))
		if err != nil {
			return nil, err
		}
		return &AuditEventOutput{Body: auditView(*e, !holdsLicenceAdmin(ctx))}, nil
	})
}

func (s *Server) listAudit(ctx context.Context, in *ListAuditInput) (*ListOutput[AuditEvent], error) {
	mask := !holdsLicenceAdmin(ctx)
	f := resources.AuditFilter{Actor: in.Actor, Action: in.Action, EntityType: in.EntityType, EntityID: in.EntityID,
		Since: timePtr(in.Since), Until: timePtr(in.Until), MaskLicenceSerials: mask}
	return listPage(ctx, s, "audit-events", f, in.page(),
		func(q resources.PageQuery) (resources.Page[resources.AuditEvent], error) {
			return s.svc.Audit.ListAuditEvents(ctx, f, q)
		}, func(e resources.AuditEvent) AuditEvent { return auditView(e, mask) })
}

// auditView shows an event; maskSerial masks the serial that is the entity
// id of a licence event (a caller without licence-admin-global).
func auditView(e resources.AuditEvent, maskSerial bool) AuditEvent {
	if maskSerial && e.EntityType == resources.EntityTypeLicence && e.EntityID != nil {
		masked := resources.MaskSerial(*e.EntityID)
		e.EntityID = &masked
	}
	before, after := jsonObject(e.BeforeState), jsonObject(e.AfterState)
	if e.EntityType == resources.EntityTypeBrandAsset {
		resources.ShowAssetDigest(before)
		resources.ShowAssetDigest(after)
	}
	return AuditEvent{ID: formatID(e.ID), OccurredAt: e.OccurredAt.UTC(), Actor: e.Actor, Action: e.Action,
		EntityType: e.EntityType, EntityID: e.EntityID, AuthKind: e.AuthKind, TokenID: e.TokenID,
		RequestID: e.RequestID, SourceIP: e.SourceIP, BeforeState: before, AfterState: after}
}

// jsonObject decodes a stored state with every secret-looking member null
// (rows written straight into the table by the portal, pipelines or ops
// scripts skipped the writing side's redaction); anything but an object is
// null.
func jsonObject(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		return nil
	}
	resources.RedactSecrets(m)
	return m
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

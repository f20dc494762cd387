package resources

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Actor is who makes a change, as the audit log records it.
type Actor struct {
	Label     string // person's e-mail, "system", "pipeline:<run>", "ops:<script>"
	UserID    *int64 // the acting person, when one acts
	AuthKind  string // AuthKindSession, AuthKindPAT, AuthKindServiceAccount or ""
	TokenID   string // the API token used, for pat and service_account
	RequestID string // the request's X-Request-ID
	SourceIP  string // the client's address
}

// AuditEvent is one row of the audit log.
type AuditEvent struct {
	ID          int64
	OccurredAt  time.Time
	Actor       string
	Action      string
	EntityType  string
	EntityID    *string
	AuthKind    *string
	TokenID     *string
	RequestID   *string
	SourceIP    *string
	BeforeState json.RawMessage // null on a create
	AfterState  json.RawMessage // null on a delete
}

// AuditFilter narrows the audit log; zero members do not filter.
type AuditFilter struct {
	Actor      string
	Action     string
	EntityType string
	EntityID   string
	Since      *time.Time // inclusive
	Until      *time.Time // exclusive
	// MaskLicenceSerials compares EntityID with the masked serial on rows of
	// entity type licence (a caller without licence-admin-global sees and
	// filters by the masked form only).
	MaskLicenceSerials bool
}

// EntityTypeLicence is the entity type of licence events; their entity id
// is the serial, masked on reading unless the caller holds
// licence-admin-global.
const EntityTypeLicence = "licence"

// AuditReader reads the audit log, newest first.
type AuditReader interface {
	ListAuditEvents(ctx context.Context, f AuditFilter, q PageQuery) (Page[AuditEvent], error)
	GetAuditEvent(ctx context.Context, id int64) (*AuditEvent, error)
}

// CodeAuditEventNotFound is the 404 code of an unknown audit event id.
const CodeAuditEventNotFound = "audit_event_not_found"

var secretMarkers = []string{
	"secret", "password", "passwd", "passphrase", "token", "hash", "pepper", "credential",
	"api_key", "apikey", "private_key", "signature", "cookie", "session_key", "authorization",
}

// secretSeparators joins the words of a member name as the markers do:
// `X-Api-Key`, `private key` and `ssh.private.key` name secrets too.
var secretSeparators = strings.NewReplacer("-", "_", " ", "_", ".", "_")

// SecretLooking reports whether a member name looks like it holds a secret,
// whatever the case and whichever of `_`, `-`, space or `.` joins its words.
func SecretLooking(name string) bool {
	n := strings.ToLower(name)
	if strings.ContainsAny(n, "- .") {
		n = secretSeparators.Replace(n)
	}
	for _, m := range secretMarkers {
		if strings.Contains(n, m) {
			return true
		}
	}
	return false
}

// AuditState renders an entity for before_state/after_state: its JSON form
// with every secret-looking member nulled at any depth. A nil entity is SQL
// NULL (nil). Most entities have no such member: their JSON is kept as
// encoded (one pass); only one that names a secret-looking member (or a
// member name with an escape, which the scan does not read) is decoded,
// redacted and encoded again.
func AuditState(entity any) (json.RawMessage, error) {
	if entity == nil {
		return nil, nil
	}
	raw, err := json.Marshal(entity)
	if err != nil || !namesSecretLooking(raw) {
		return raw, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(redact(v))
}

// namesSecretLooking reports whether the valid JSON raw has a member whose
// name is secret-looking, or one whose name holds an escape (not read
// here: the caller then decodes and decides). A string is a member name
// when a colon follows it.
func namesSecretLooking(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		start, escaped := i+1, false
		for i++; i < len(raw) && raw[i] != '"'; i++ {
			if raw[i] == '\\' {
				escaped = true
				i++
			}
		}
		if !followedByColon(raw, i+1) {
			continue
		}
		if escaped || SecretLooking(string(raw[start:i])) {
			return true
		}
	}
	return false
}

// followedByColon reports whether the first byte from i on that is not
// JSON white space is a colon.
func followedByColon(raw []byte, i int) bool {
	for ; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return raw[i] == ':'
	}
	return false
}

// RedactSecrets nulls every secret-looking member of a decoded JSON value
// (maps and slices changed in place) at any depth and returns it: the
// reading side of the rule, for states some other writer stored unredacted.
func RedactSecrets(v any) any { return redact(v) }

func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if SecretLooking(k) {
				x[k] = nil
			} else {
				x[k] = redact(val)
			}
		}
	case []any:
		for i := range x {
			x[i] = redact(x[i])
		}
	}
	return v
}

package resources

import (
	"context"
	"encoding/json"
	"errors"
)

// Change kinds of the change feed: committed changes that alter what an
// authenticated credential may do, whether the API answers at all, or which
// gateway keys open the AI gateway.
const (
	ChangeToken     = "token"      // a token was created, revoked or extended: TokenID
	ChangePrincipal = "principal"  // a person's or service account's roles, keys or status changed
	ChangeRoles     = "roles"      // a role's keys changed: anyone may be affected
	ChangeAPISwitch = "api_switch" // the API was turned on or off
	// ChangeGatewayKey: an AI gateway key was created, rotated or revoked:
	// GatewayKeyID (never its value nor its hash).
	ChangeGatewayKey = "gateway_key"
)

// Change is one event of the change feed. Replicas that cache credentials
// drop what it touches; it never carries a secret.
type Change struct {
	Kind          string `json:"kind"`
	TokenID       int64  `json:"token_id,omitempty"`
	PrincipalKind string `json:"principal_kind,omitempty"` // PrincipalUser or PrincipalServiceAccount
	PrincipalID   int64  `json:"principal_id,omitempty"`
	GatewayKeyID  int64  `json:"gateway_key_id,omitempty"`
}

// TokenChanged is the change of one token.
func TokenChanged(id int64) Change { return Change{Kind: ChangeToken, TokenID: id} }

// GatewayKeyChanged is the change of one AI gateway key.
func GatewayKeyChanged(id int64) Change { return Change{Kind: ChangeGatewayKey, GatewayKeyID: id} }

// PrincipalChanged is the change of one person or service account.
func PrincipalChanged(kind string, id int64) Change {
	return Change{Kind: ChangePrincipal, PrincipalKind: kind, PrincipalID: id}
}

// ChangePublisher tells every replica about a committed change. It is called
// after the commit and never fails the change: a replica that misses an
// event re-checks its credentials against the database within the re-check
// interval (30 seconds by default).
type ChangePublisher interface {
	Publish(ctx context.Context, c Change)
}

// ChangeSink receives a change feed: Changed applies one change, Resync
// drops everything cached (the feed may have missed events).
type ChangeSink interface {
	Changed(Change)
	Resync()
}

// Encode is the change as the feeds carry it (JSON, no secret).
func (c Change) Encode() string {
	b, _ := json.Marshal(c) // plain strings and integers: cannot fail
	return string(b)
}

// ParseChange reads a change a feed carried; one without a kind is an error.
func ParseChange(payload string) (Change, error) {
	var c Change
	err := json.Unmarshal([]byte(payload), &c)
	if err == nil && c.Kind == "" {
		err = errors.New("change without a kind")
	}
	return c, err
}

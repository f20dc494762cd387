package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// idempotencyKey derives the Idempotency-Key of a create from the resource
// type and the create body built from the planned configuration (every
// member the create sends; JSON objects marshal with sorted members, so
// the text is canonical). The same configuration applied again, after a
// failed or interrupted apply, sends the same key with the same body, and
// the server replays the first answer instead of booking a second
// customer, project or key (for 24 hours, per calling account). A changed
// configuration is a different request with a different key.
func idempotencyKey(typeName string, body record) string {
	raw, _ := json.Marshal(body)
	return keyOf(typeName, typeName+"\x00"+string(raw))
}

// supersededKey is the key to use when the create answered for key was
// replayed but what it made no longer exists (deleted, revoked, archived):
// derived from key and the vanished id, so a retry of this create too is
// replayed rather than booked twice.
func supersededKey(typeName, key, id string) string {
	return keyOf(typeName, key+"\x00superseded\x00"+id)
}

func keyOf(typeName, material string) string {
	sum := sha256.Sum256([]byte(material))
	return "tf-" + typeName + "-" + hex.EncodeToString(sum[:20])
}

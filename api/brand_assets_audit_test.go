package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBrandAssets_AuditSHA256IsHexAsTheAssetShows: the audit event of an
// upload spells the digest as the asset's metadata and its ETag do
// (lower-case hex), and so does a row written before that was decided
// (base64 at rest, shown as hex: one spelling for a client to compare).
func TestBrandAssets_AuditSHA256IsHexAsTheAssetShows(t *testing.T) {
	e, tok := brandEnv(t)
	img := pngBytes(t)
	a := uploaded(t, e, tok, "logo", "image/png", img)
	id := a["id"].(string)
	etag := e.Do("GET", "/api/v1/brand/assets/"+id+"/content", tok, nil).Header.Get("ETag")
	sum := sha256.Sum256(img)
	old := sha256.Sum256([]byte("an older upload"))
	if _, err := e.Store.DB().NewRaw(`INSERT INTO audit_events (actor, action, entity_type, entity_id,
		after_state) VALUES ('a@b.example', 'brand_asset.create', 'brand_asset', '999', ?)`,
		`{"id": 999, "kind": "logo", "sha256": "`+base64.StdEncoding.EncodeToString(old[:])+`"}`).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	var stored string // as written now, at rest too
	err := e.Store.DB().NewRaw(`SELECT after_state->>'sha256' FROM audit_events
		WHERE action = 'brand_asset.create' AND entity_id = ?`, id).Scan(context.Background(), &stored)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"asset": a["sha256"], "etag": strings.Trim(etag, `"`), "stored": stored}
	for _, asset := range []string{id, "999"} {
		ev, _ := auditItems(t, e, tok, "?action=brand_asset.create&entity_id="+asset)
		if len(ev) != 1 {
			t.Fatalf("events of asset %s: %v", asset, ev)
		}
		got["list "+asset] = ev[0]["after_state"].(map[string]any)["sha256"]
		one := e.Do("GET", "/api/v1/audit-events/"+ev[0]["id"].(string), tok, nil).JSON(t)
		got["one "+asset] = one["after_state"].(map[string]any)["sha256"]
	}
	h, oldHex := hex.EncodeToString(sum[:]), hex.EncodeToString(old[:])
	want := map[string]any{"asset": h, "etag": h, "stored": h, "list " + id: h, "one " + id: h,
		"list 999": oldHex, "one 999": oldHex}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("sha256 spellings (-want +got):\n%s", diff)
	}
}

// Package licencetest signs licence bundles for tests with the test
// vendor key kept in testdata (an Ed25519 seed in standard base64). Only
// servers configured with PublicKey trust what it signs.
package licencetest

import (
	"crypto/ed25519"
	_ "embed"
	"encoding/base64"
	"strings"
	"time"

	"platformapi/resources"
)

//go:embed testdata/vendor-test-key.seed
var seed string

// Serial is the serial of Payload's licence.
const Serial = "TEST-ABCD-EFGH-MNOP"

var key = func() ed25519.PrivateKey {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(seed))
	if err != nil || len(raw) != ed25519.SeedSize {
		panic("licencetest: testdata/vendor-test-key.seed is not a base64 Ed25519 seed")
	}
	return ed25519.NewKeyFromSeed(raw)
}()

// PublicKey is the test vendor's public key.
func PublicKey() ed25519.PublicKey { return key.Public().(ed25519.PublicKey) }

// PublicKeyBase64 is PublicKey as --licence-public-key takes it.
func PublicKeyBase64() string { return base64.StdEncoding.EncodeToString(PublicKey()) }

// Payload is a licence valid at now for a year with 30 days of grace,
// with the features ai and brand and no limits.
func Payload(installationID string, now time.Time) resources.LicencePayload {
	return resources.LicencePayload{Serial: Serial, InstallationID: installationID, Edition: "test",
		Features: []string{resources.FeatureAI, resources.FeatureBrand}, Limits: map[string]int{},
		ValidFrom:  now.Add(-time.Hour).UTC().Truncate(time.Second),
		ValidUntil: now.AddDate(1, 0, 0).UTC().Truncate(time.Second), GraceDays: 30}
}

// Bundle signs p with the test vendor key.
func Bundle(p resources.LicencePayload) string {
	b, err := resources.SignLicence(key, p)
	if err != nil {
		panic(err)
	}
	return b
}

// Sign signs raw payload bytes as they are (for malformed payloads).
func Sign(raw []byte) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(raw) + "." + enc.EncodeToString(ed25519.Sign(key, raw))
}

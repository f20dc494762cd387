package resources

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Licence states, features, limits and problem codes.
const (
	LicenceValid   = "valid"   // between valid_from and valid_until
	LicenceGrace   = "grace"   // grace_days after valid_until: writes still allowed
	LicenceExpired = "expired" // after the grace period: writes locked
	LicenceMissing = "missing" // none installed: writes need one
	LicenceInvalid = "invalid" // the stored bundle no longer verifies: writes locked

	FeatureAI      = "ai"        // every write of the AI area
	FeatureBrand   = "brand"     // brand writes
	LimitCustomers = "customers" // non-archived customers

	CodeLicenceRequired      = "licence_required"
	CodeLicenceLocked        = "licence_locked"
	CodeLicenceRestricted    = "licence_restricted"
	CodeLicenceBundleInvalid = "licence_bundle_invalid"

	// MaxLicenceBundleLen bounds the wire form of a bundle.
	MaxLicenceBundleLen = 16 << 10
)

var (
	serialPattern      = regexp.MustCompile(`^[A-Za-z0-9]{4}(-[A-Za-z0-9]{4}){3}$`)
	licenceNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)
)

// LicencePayload is what the vendor signs: the licence of one installation.
type LicencePayload struct {
	Serial         string         `json:"serial"`
	InstallationID string         `json:"installation_id"`
	Edition        string         `json:"edition"`
	Features       []string       `json:"features"`
	Limits         map[string]int `json:"limits"`
	ValidFrom      time.Time      `json:"valid_from"`
	ValidUntil     time.Time      `json:"valid_until"`
	GraceDays      int            `json:"grace_days"`
}

// GraceEnds is when the grace period after ValidUntil ends.
func (p LicencePayload) GraceEnds() time.Time {
	return p.ValidUntil.AddDate(0, 0, p.GraceDays)
}

// StoredLicence is what an installation keeps: its id, generated once, and
// the bundle installed last ("" while none is).
type StoredLicence struct {
	InstallationID string
	Bundle         string
	InstalledAt    *time.Time
	InstalledBy    *string
}

// Licence is the stored licence as verified now. Payload is nil while the
// state is missing or invalid.
type Licence struct {
	InstallationID string
	State          string
	Payload        *LicencePayload
	InstalledAt    *time.Time
	// Problem says why the stored bundle is invalid; "" otherwise.
	Problem string
}

// Licences keeps the installation id and the installed bundle. Install
// stores a bundle already verified for this installation, with one audit
// event (action licence.install, entity type licence, entity id the full
// serial; states carry the masked serial and never the bundle). Installing
// the bundle already installed changes nothing.
type Licences interface {
	StoredLicence(ctx context.Context) (StoredLicence, error)
	InstallLicence(ctx context.Context, a Actor, bundle string, p LicencePayload) (StoredLicence, error)
}

// LicenceVerifier checks bundles against the vendor public keys the
// installation trusts.
type LicenceVerifier struct {
	Keys []ed25519.PublicKey
}

// ParseLicencePublicKey reads a vendor public key: the raw 32-byte Ed25519
// key in standard base64.
func ParseLicencePublicKey(s string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("a licence public key is 32 bytes in standard base64")
	}
	return ed25519.PublicKey(raw), nil
}

// SignLicence is what the vendor does: the wire form
// base64url(payload JSON) "." base64url(Ed25519 signature of those bytes).
// The server never signs; tests and the demo key use it.
func SignLicence(key ed25519.PrivateKey, p LicencePayload) (string, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(raw) + "." + enc.EncodeToString(ed25519.Sign(key, raw)), nil
}

// bundleInvalid is the 422 refusal of a bundle, naming what failed.
func bundleInvalid(what, format string, args ...any) *Error {
	return Invalid("bundle", CodeLicenceBundleInvalid, what+": "+format, args...)
}

// Verify checks a bundle for installation at now: its form, its signature
// by a trusted key, its members, its installation id and its dates (not yet
// valid, or past its grace period, is refused). The error names what failed.
func (v LicenceVerifier) Verify(bundle, installation string, now time.Time) (LicencePayload, error) {
	p, err := v.decode(bundle)
	if err != nil {
		return p, err
	}
	if p.InstallationID != installation {
		return p, bundleInvalid("installation_id", "the bundle is for installation %q, this is %q",
			p.InstallationID, installation)
	}
	switch {
	case now.Before(p.ValidFrom):
		return p, bundleInvalid("valid_from", "the licence starts at %s, in the future",
			p.ValidFrom.UTC().Format(time.RFC3339))
	case !now.Before(p.GraceEnds()):
		return p, bundleInvalid("valid_until", "the licence and its grace period ended at %s",
			p.GraceEnds().UTC().Format(time.RFC3339))
	}
	return p, nil
}

// decode checks form, signature and members, not installation or dates.
func (v LicenceVerifier) decode(bundle string) (LicencePayload, error) {
	var p LicencePayload
	enc := base64.RawURLEncoding
	body, sig, ok := strings.Cut(strings.TrimSpace(bundle), ".")
	raw, err1 := enc.DecodeString(strings.TrimRight(body, "="))
	signature, err2 := enc.DecodeString(strings.TrimRight(sig, "="))
	if !ok || err1 != nil || err2 != nil || len(signature) != ed25519.SignatureSize {
		return p, bundleInvalid("form", "a bundle is base64url(payload JSON) \".\" base64url(64-byte Ed25519 signature)")
	}
	if len(v.Keys) == 0 {
		return p, bundleInvalid("signature", "no vendor public key is configured (--licence-public-key)")
	}
	if !slices.ContainsFunc(v.Keys, func(k ed25519.PublicKey) bool { return ed25519.Verify(k, raw, signature) }) {
		return p, bundleInvalid("signature", "the signature does not verify against the vendor's public key")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&p); err != nil || dec.More() {
		return p, bundleInvalid("payload", "the signed payload is not the licence JSON object")
	}
	return p, p.check()
}

// check applies the member rules of a payload.
func (p LicencePayload) check() error {
	switch {
	case !serialPattern.MatchString(p.Serial):
		return bundleInvalid("serial", "not four groups of four letters or digits joined by '-'")
	case p.InstallationID == "":
		return bundleInvalid("installation_id", "missing")
	case p.Edition == "" || len(p.Edition) > 40:
		return bundleInvalid("edition", "1 to 40 characters")
	case p.ValidFrom.IsZero() || p.ValidUntil.IsZero() || !p.ValidFrom.Before(p.ValidUntil):
		return bundleInvalid("valid_until", "valid_from and valid_until are RFC 3339 times, valid_from first")
	case p.GraceDays < 0 || p.GraceDays > 3650:
		return bundleInvalid("grace_days", "an integer from 0 to 3650")
	}
	for _, f := range p.Features {
		if !licenceNamePattern.MatchString(f) {
			return bundleInvalid("features", "%q is not a feature name", f)
		}
	}
	for name, n := range p.Limits {
		if !licenceNamePattern.MatchString(name) || n < 0 {
			return bundleInvalid("limits", "%q must name a limit with an integer of at least 0", name)
		}
	}
	return nil
}

// Evaluate verifies the stored bundle again and computes the state at now.
func (v LicenceVerifier) Evaluate(st StoredLicence, now time.Time) Licence {
	l := Licence{InstallationID: st.InstallationID, State: LicenceMissing, InstalledAt: st.InstalledAt}
	if st.Bundle == "" {
		return l
	}
	p, err := v.decode(st.Bundle)
	if err == nil && p.InstallationID != st.InstallationID {
		err = bundleInvalid("installation_id", "the bundle is for another installation")
	}
	if err != nil {
		l.State, l.Problem = LicenceInvalid, err.(*Error).Detail
		return l
	}
	l.Payload = &p
	return l.At(now)
}

// At is the licence at now: a verified payload's state follows the clock,
// a missing or unverifiable licence stays as it is. Evaluate(st, t).At(now)
// equals Evaluate(st, now) without verifying the signature again, so a
// replica verifies a stored bundle once, not on every write.
func (l Licence) At(now time.Time) Licence {
	if l.Payload == nil {
		return l
	}
	l.State, l.Problem = l.Payload.StateAt(now), ""
	if l.State == LicenceInvalid {
		l.Problem = "valid_from: the licence starts in the future"
	}
	return l
}

// StateAt is the state of a verified licence at now.
func (p LicencePayload) StateAt(now time.Time) string {
	switch {
	case now.Before(p.ValidFrom):
		return LicenceInvalid
	case now.Before(p.ValidUntil):
		return LicenceValid
	case now.Before(p.GraceEnds()):
		return LicenceGrace
	}
	return LicenceExpired
}

// MaskSerial hides every group of a serial but the last: ****-****-****-MNOP.
func MaskSerial(serial string) string {
	i := strings.LastIndexByte(serial, '-')
	if i < 0 {
		return "****"
	}
	return "****-****-****" + serial[i:]
}

// DecodeLicenceUnverified reads the payload of a bundle without checking
// its signature or members: only to describe what was installed (the audit
// state of a licence being replaced), never to grant anything.
func DecodeLicenceUnverified(bundle string) (LicencePayload, bool) {
	var p LicencePayload
	body, _, _ := strings.Cut(bundle, ".")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(body, "="))
	return p, err == nil && json.Unmarshal(raw, &p) == nil
}

// StoredLicenceReader reads the installation id and the installed bundle.
type StoredLicenceReader interface {
	StoredLicence(ctx context.Context) (StoredLicence, error)
}

// LicenceInstaller stores a bundle verified for this installation as a
// (Licences.InstallLicence for an API caller; the store's InstallLicenceAs
// for a person of the portal, who needs licence-admin-global or admin).
type LicenceInstaller func(ctx context.Context, a Actor, bundle string, p LicencePayload) (StoredLicence, error)

// Install verifies bundle for this installation (read from s) at now and
// installs it with install as a: the one road of PUT /licence, the portal's
// page and the portal CLI. White space around the bundle (a file's line
// break) is not part of it. It answers the licence as verified after the
// install.
func (v LicenceVerifier) Install(ctx context.Context, s StoredLicenceReader, install LicenceInstaller, a Actor,
	bundle string, now time.Time) (Licence, error) {
	bundle = strings.TrimSpace(bundle)
	st, err := s.StoredLicence(ctx)
	if err != nil {
		return Licence{}, err
	}
	p, err := v.Verify(bundle, st.InstallationID, now)
	if err != nil {
		return Licence{}, err
	}
	if st, err = install(ctx, a, bundle, p); err != nil {
		return Licence{}, err
	}
	return v.Evaluate(st, now), nil
}

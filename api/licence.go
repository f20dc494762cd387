package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// Licence is the installation's licence as GET /licence shows it.
type Licence struct {
	State          string         `json:"state" enum:"valid,grace,expired,missing,invalid" doc:"valid; grace (past valid_until by at most grace_days: writes still work); expired, invalid (the bundle does not verify or is not valid yet), missing: writes refused. Other values may appear"`
	InstallationID string         `json:"installation_id" doc:"This installation's id, generated once; a bundle is issued for it"`
	Serial         *string        `json:"serial" nullable:"true" example:"****-****-****-MNOP" doc:"Masked to its last group unless the caller holds licence-admin-global"`
	Edition        *string        `json:"edition" nullable:"true"`
	Features       []string       `json:"features" nullable:"true" doc:"What the licence includes: ai (AI-area writes), brand (brand writes), …"`
	Limits         map[string]int `json:"limits" nullable:"true" doc:"Name to maximum: customers (non-archived customers); other names may appear"`
	ValidFrom      *time.Time     `json:"valid_from" nullable:"true"`
	ValidUntil     *time.Time     `json:"valid_until" nullable:"true"`
	GraceDays      *int           `json:"grace_days" nullable:"true" doc:"Days after valid_until during which writes still work"`
	InstalledAt    *time.Time     `json:"installed_at" nullable:"true"`
	Remedy         *string        `json:"remedy" nullable:"true" doc:"What an operator can do; null while valid"`
}

// LicenceInstall is the body of PUT /licence.
type LicenceInstall struct {
	Bundle string `json:"bundle" minLength:"1" maxLength:"16384" doc:"The signed bundle issued for this installation: base64url(payload JSON) \".\" base64url(Ed25519 signature)"`
}

// Inputs and outputs of the licence operations.
type (
	PutLicenceInput struct {
		Body LicenceInstall
	}
	LicenceOutput struct {
		Body Licence
	}
)

var (
	licenceReaders = []string{resources.PermLicenceRead, resources.PermLicenceAdmin}
	licenceAdmins  = []string{resources.PermLicenceAdmin}
)

func (s *Server) registerLicence() {
	tags := []string{"Licence"}
	Register(s.api, Op{ID: "get-licence", Toolset: ToolsetLicence, Method: http.MethodGet, Path: "/licence", Tags: tags,
		Summary: "Read the licence", Permissions: licenceReaders,
		Description: "The licence state, computed from the clock, and this installation's id (shown even while no " +
			"licence is installed). Reads always work; writes need a valid licence (or one in grace).",
		Notes: "`state` (`valid`, `grace`, `expired`, `missing`, `invalid`, from the clock), " +
			"`installation_id` (also while missing), `serial` masked to its last group unless " +
			"the caller holds `licence-admin-global`, `edition`, `features`, `limits`, dates, " +
			"`installed_at`, `remedy`",
	}, s.getLicence)
	Register(s.api, Op{ID: "install-licence", Toolset: ToolsetLicence, Method: http.MethodPut, Path: "/licence", Tags: tags,
		Summary: "Install a licence bundle", Permissions: licenceAdmins, LicenceExempt: true,
		Errors: []int{http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Verifies the bundle against the vendor's public key and installs it. A bundle whose form, " +
			"signature, members, installation_id or dates do not hold is 422 licence_bundle_invalid naming what failed " +
			"(field bundle, the detail starts with it), and nothing changes. Reachable whatever the licence state.",
		Notes: "`{\"bundle\": \"…\"}`; verified (form, signature, members, installation id, " +
			"dates) else 422 `licence_bundle_invalid` naming what failed, nothing changes; " +
			"reachable in every licence state; audited",
	}, s.putLicence)
}

func (s *Server) getLicence(ctx context.Context, _ *struct{}) (*LicenceOutput, error) {
	l, err := s.licence.load(ctx)
	if err != nil {
		return nil, err
	}
	return &LicenceOutput{Body: licenceView(l, holdsLicenceAdmin(ctx))}, nil
}

func (s *Server) putLicence(ctx context.Context, in *PutLicenceInput) (*LicenceOutput, error) {
	l, err := s.licence.verifier.Install(ctx, s.svc.Licences, s.svc.Licences.InstallLicence, ActorFrom(ctx),
		in.Body.Bundle, s.cfg.Now())
	s.licence.forget()
	if err != nil {
		return nil, err
	}
	return &LicenceOutput{Body: licenceView(l, holdsLicenceAdmin(ctx))}, nil
}

// holdsLicenceAdmin reports whether the caller may see full serials.
func holdsLicenceAdmin(ctx context.Context) bool {
	c := CredentialFrom(ctx)
	return c != nil && c.Holds(resources.PermLicenceAdmin)
}

func licenceView(l resources.Licence, fullSerial bool) Licence {
	out := Licence{State: l.State, InstallationID: l.InstallationID, InstalledAt: utcPtr(l.InstalledAt)}
	if r := l.Remedy(); r != "" {
		out.Remedy = &r
	}
	p := l.Payload
	if p == nil || l.State == resources.LicenceInvalid { // one starting in the future has a payload
		return out
	}
	serial := p.Serial
	if !fullSerial {
		serial = resources.MaskSerial(serial)
	}
	from, until := p.ValidFrom.UTC(), p.ValidUntil.UTC()
	out.Serial, out.Edition, out.Features, out.Limits = &serial, &p.Edition, nonNilSlice(p.Features), p.Limits
	out.ValidFrom, out.ValidUntil, out.GraceDays = &from, &until, &p.GraceDays
	if out.Limits == nil {
		out.Limits = map[string]int{}
	}
	return out
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// licenceCache keeps the installed licence, verified, for the licence
// middleware; each replica reads it at most every settingsTTL and verifies
// a bundle again only when the stored one changed. The state is computed
// from the clock on every use.
type licenceCache struct {
	svc       resources.Licences
	verifier  resources.LicenceVerifier
	now       func() time.Time
	mu        sync.Mutex
	stored    resources.StoredLicence
	evaluated resources.Licence // stored, verified
	readAt    time.Time
}

// load returns the licence as it stands now.
func (c *licenceCache) load(ctx context.Context) (resources.Licence, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.readAt.IsZero() || now.Sub(c.readAt) >= settingsTTL || now.Before(c.readAt) {
		st, err := c.svc.StoredLicence(ctx)
		if err != nil {
			return resources.Licence{}, err
		}
		if c.readAt.IsZero() || !sameStoredLicence(st, c.stored) {
			c.evaluated = c.verifier.Evaluate(st, now)
		}
		c.stored, c.readAt = st, now
	}
	return c.evaluated.At(now), nil
}

// sameStoredLicence reports whether a and b hold the same bundle for the
// same installation, installed at the same moment.
func sameStoredLicence(a, b resources.StoredLicence) bool {
	sameTime := a.InstalledAt == nil && b.InstalledAt == nil ||
		a.InstalledAt != nil && b.InstalledAt != nil && a.InstalledAt.Equal(*b.InstalledAt)
	return sameTime && a.Bundle == b.Bundle && a.InstallationID == b.InstallationID
}

// forget makes the next load read the database (after an install here).
func (c *licenceCache) forget() {
	c.mu.Lock()
	c.readAt = time.Time{}
	c.mu.Unlock()
}

// licenceGate is the one place the licence is enforced: reads always pass,
// and so do operations declared LicenceExempt (installing a licence); every
// other write needs a licence that is valid or in grace and includes the
// operation's Feature, else 403 licence_required, licence_locked or
// licence_restricted with state and remedy (never Retry-After). An
// operation's Limit is handed to the store, which counts it under a lock.
func (s *Server) licenceGate(ctx huma.Context, next func(huma.Context)) {
	op, _ := opOf(ctx.Operation())
	if op.LicenceExempt || readMethod(ctx.Method()) {
		next(ctx)
		return
	}
	l, err := s.licence.load(ctx.Context())
	if err != nil {
		s.writeHuma(ctx, &Problem{Status: http.StatusServiceUnavailable, Code: resources.CodeUnavailable,
			Detail: "the licence cannot be read; retry shortly", retryAfter: time.Second, cause: err})
		return
	}
	if err := l.PermitWrite(op.Feature); err != nil {
		s.writeHuma(ctx, err)
		return
	}
	if u, ok := l.LimitFor(op.Limit); op.Limit != "" && ok {
		ctx = huma.WithContext(ctx, resources.WithUsageLimit(ctx.Context(), u))
	}
	next(ctx)
}

func readMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

package resources

import (
	"context"
	"fmt"
	"slices"
	"time"
)

const installHint = "install a bundle issued for installation %s with PUT /api/v1/licence (licence-admin-global)"

// Remedy says what an operator can do about the licence now; "" while it
// is valid.
func (l Licence) Remedy() string {
	switch l.State {
	case LicenceMissing:
		return fmt.Sprintf("No licence is installed: "+installHint+".", l.InstallationID)
	case LicenceInvalid:
		return fmt.Sprintf("The installed bundle cannot be used (%s): "+installHint+".", l.Problem,
			l.InstallationID) // a bad signature, another installation, or not valid yet
	case LicenceGrace:
		return fmt.Sprintf("The licence expired at %s; writes stop at %s: "+installHint+".",
			day(l.Payload.ValidUntil), day(l.Payload.GraceEnds()), l.InstallationID)
	case LicenceExpired:
		return fmt.Sprintf("The licence and its grace period ended at %s; writes are locked: renew it and "+
			installHint+".", day(l.Payload.GraceEnds()), l.InstallationID)
	}
	return ""
}

func day(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// licenceRefusal is the 403 of a licence that does not allow a request.
func (l Licence) licenceRefusal(code, detail, remedy string) *Error {
	return &Error{Kind: KindForbidden, Code: code, Detail: detail, State: l.State, Remedy: remedy}
}

// PermitWrite allows a write that needs feature ("" for none) or gives the
// licence_* refusal: licence_required while missing, licence_locked while
// expired or invalid, licence_restricted when the licence lacks the feature.
func (l Licence) PermitWrite(feature string) error {
	switch l.State {
	case LicenceMissing:
		return l.licenceRefusal(CodeLicenceRequired, "this installation has no licence; reads work, writes need one",
			l.Remedy())
	case LicenceExpired, LicenceInvalid:
		return l.licenceRefusal(CodeLicenceLocked, "the licence is "+l.State+"; reads work, writes are locked", l.Remedy())
	}
	if feature != "" && !slices.Contains(l.Payload.Features, feature) {
		return l.licenceRefusal(CodeLicenceRestricted, "the licence does not include the feature "+feature,
			fmt.Sprintf("The licence (edition %s) lacks the feature %q: "+installHint+" that includes it.",
				l.Payload.Edition, feature, l.InstallationID))
	}
	return nil
}

// UsageLimit is a limit of the licence that a create counts against: at
// most Max of Name.
type UsageLimit struct {
	Name    string
	Max     int
	Licence Licence
}

// LimitFor returns the licence's limit of name, if it sets one.
func (l Licence) LimitFor(name string) (UsageLimit, bool) {
	if l.Payload == nil {
		return UsageLimit{}, false
	}
	n, ok := l.Payload.Limits[name]
	return UsageLimit{Name: name, Max: n, Licence: l}, ok
}

// Check refuses a create when used (counted under a lock, before the
// create) already reaches the limit: 403 licence_restricted.
func (u UsageLimit) Check(used int) error {
	if used < u.Max {
		return nil
	}
	return u.Licence.licenceRefusal(CodeLicenceRestricted,
		fmt.Sprintf("the licence allows %d %s and %d exist", u.Max, u.Name, used),
		fmt.Sprintf("The licence (edition %s) limits %s to %d: archive one, or "+installHint+" with a higher limit.",
			u.Licence.Payload.Edition, u.Name, u.Max, u.Licence.InstallationID))
}

type usageLimitKey struct{ name string }

// WithUsageLimit hands the limit a request's create counts against to the
// store, which checks it under a lock inside the create's transaction (so
// concurrent creates cannot pass it together).
func WithUsageLimit(ctx context.Context, u UsageLimit) context.Context {
	return context.WithValue(ctx, usageLimitKey{u.Name}, u)
}

// UsageLimitFrom returns the limit of name the request carries, if any.
func UsageLimitFrom(ctx context.Context, name string) (UsageLimit, bool) {
	u, ok := ctx.Value(usageLimitKey{name}).(UsageLimit)
	return u, ok
}

package resources

import (
	"context"
	"errors"
	"strings"
)

// VCSGroup is a group on the code host as the platform sees it.
type VCSGroup struct {
	Path      string // full path, e.g. "acme"
	Name      string
	WebURL    string
	Adoptable bool // empty, or marked as the platform's own (see GroupAdoptable)
}

// CodeHost is the code host (vcs_*) the platform keeps customer groups on.
//
// Adoption rule, identical in every adapter: an existing group is adoptable
// when it holds no projects and no subgroups, or when its description
// contains ManagedMarker. A group the platform creates gets ManagedMarker in
// its description, so the platform can always adopt its own groups again.
//
// Errors: besides ErrVCSGroupCollision from EnsureGroup, every failure
// (network, timeout, 5xx, refused credentials, an answer the adapter does not
// understand) wraps ErrCodeHostUnreachable, so a caller needs to tell only
// those two apart. No error message ever carries a credential.
type CodeHost interface {
	// FindGroup looks a top-level group up by path: (nil, nil) when none exists.
	// It only reads; it never changes the code host.
	FindGroup(ctx context.Context, path string) (*VCSGroup, error)
	// EnsureGroup creates the top-level group at path named name, or adopts the existing
	// one when it is adoptable; ErrVCSGroupCollision when a group that cannot be adopted holds the path.
	EnsureGroup(ctx context.Context, path, name string) (*VCSGroup, error)
}

// Sentinel errors of a CodeHost; adapters wrap them with %w.
var (
	// ErrCodeHostUnreachable: network failure, timeout, 5xx, refused credentials.
	ErrCodeHostUnreachable = errors.New("code host unreachable")
	// ErrVCSGroupCollision: a group the platform cannot adopt holds the path.
	ErrVCSGroupCollision = errors.New("vcs group collision")
)

// ManagedMarker is the text a group's description carries when the platform
// owns it; a group carrying it is always adoptable.
const ManagedMarker = "managed-by: platformapi"

// Warning and problem codes of the code-host integration.
const (
	CodeVCSGroupFailed       = "vcs_group_failed"       // warning: the group could not be created or adopted
	CodeVCSStatusUnavailable = "vcs_status_unavailable" // warning: a live lookup could not reach the code host
	CodeVCSGroupCollision    = "vcs_group_collision"    // 409: a foreign group holds the path
)

// States of a customer's vcs_status.
const (
	VCSStatePresent = "present" // the group exists on the code host
	VCSStateMissing = "missing" // no group exists at the customer's vcs_group
	VCSStateUnknown = "unknown" // the code host gave no clear answer
)

// GroupAdoptable applies the adoption rule: a group is adoptable when its
// description contains ManagedMarker, or when it holds no projects and no
// subgroups. Every CodeHost adapter decides adoption through this function.
func GroupAdoptable(description string, hasProjects, hasSubgroups bool) bool {
	return strings.Contains(description, ManagedMarker) || (!hasProjects && !hasSubgroups)
}

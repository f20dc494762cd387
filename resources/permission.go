package resources

import (
	"slices"
	"strings"
)

// Permission keys. In v1 every key a token may carry ends in "-global".
const (
	PermTenancyRead     = "tenancy-read-global"
	PermTenancyWrite    = "tenancy-write-global"
	PermUsersRead       = "users-read-global"
	PermUsersWrite      = "users-write-global"
	PermProjectsRead    = "projects-read-global"
	PermProjectsWrite   = "projects-write-global"
	PermReleasesRead    = "releases-read-global"
	PermReleasesWrite   = "releases-write-global"
	PermAIRead          = "ai-read-global"
	PermAIWrite         = "ai-write-global"
	PermAIGatewayKeys   = "ai-gateway-keys-global"
	PermAuditRead       = "audit-read-global"
	PermLicenceRead     = "licence-read-global"
	PermLicenceAdmin    = "licence-admin-global"
	PermBrandRead       = "brand-read-global"
	PermBrandWrite      = "brand-write-global"
	PermAPITokensRead   = "api-tokens-read-global"
	PermAPITokensAdmin  = "api-tokens-admin-global"
	PermAdmin           = "admin"
	PermFounder         = "founder"
	PermSSHConsole      = "ssh-console"
	permGlobalSuffix    = "-global"
	permissionKeyMaxLen = 64
)

// Permission describes one key of the catalogue.
type Permission struct {
	Key          string
	Description  string
	TokenAllowed bool
}

var permissionCatalogue = []Permission{
	{PermTenancyRead, "Read customers and tenants.", true},
	{PermTenancyWrite, "Create, change and archive customers and tenants.", true},
	{PermUsersRead, "Read users.", true},
	{PermUsersWrite, "Invite, change and deactivate users.", true},
	{PermProjectsRead, "Read projects.", true},
	{PermProjectsWrite, "Create, change and retire projects.", true},
	{PermReleasesRead, "Read release operations, release state and the PROD data lock.", true},
	{PermReleasesWrite, "Request promotions and set the PROD data lock.", true},
	{PermAIRead, "Read the AI model catalogue, AI nodes and node caches.", true},
	{PermAIWrite, "Change catalogue metadata and node caches.", true},
	{PermAIGatewayKeys, "Manage AI gateway keys.", true},
	{PermAuditRead, "Read the audit log.", true},
	{PermLicenceRead, "Read the licence state.", true},
	{PermLicenceAdmin, "Install licence bundles and see the full serial.", true},
	{PermBrandRead, "Read the brand.", true},
	{PermBrandWrite, "Replace the brand and upload brand assets.", true},
	{PermAPITokensRead, "Read API token and service account metadata.", true},
	{PermAPITokensAdmin, "Create, extend and revoke API tokens and service accounts (portal only).", true},
	{PermAdmin, "Installation administrator; never on a token.", false},
	{PermFounder, "Founder of the installation; never on a token.", false},
	{PermSSHConsole, "SSH console access; never on a token.", false},
}

// catalogueKeys maps each key of the catalogue to the catalogue's own string.
var catalogueKeys = func() map[string]string {
	m := make(map[string]string, len(permissionCatalogue))
	for _, p := range permissionCatalogue {
		m[p.Key] = p.Key
	}
	return m
}()

// CanonicalKeys returns a copy of keys (empty, not nil, for none) in which
// every key of the catalogue is the catalogue's own string, so the key sets
// that many credentials and sessions hold share their text instead of each
// holding the copy a database read made; other keys are kept as they are.
func CanonicalKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		if c, ok := catalogueKeys[k]; ok {
			k = c
		}
		out[i] = k
	}
	return out
}

// Permissions returns the whole catalogue, ordered by key.
func Permissions() []Permission {
	out := slices.Clone(permissionCatalogue)
	slices.SortFunc(out, func(a, b Permission) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// KnownPermission reports whether key is in the catalogue.
func KnownPermission(key string) bool {
	return slices.ContainsFunc(permissionCatalogue, func(p Permission) bool { return p.Key == key })
}

// TokenAllowed reports whether key may be put on an API token: a known,
// installation-wide ("-global") key other than admin, founder, ssh-console.
func TokenAllowed(key string) bool {
	i := slices.IndexFunc(permissionCatalogue, func(p Permission) bool { return p.Key == key })
	return i >= 0 && permissionCatalogue[i].TokenAllowed && strings.HasSuffix(key, permGlobalSuffix)
}

// Intersect returns the keys present in both sets, sorted and unique.
func Intersect(a, b []string) []string {
	out := make([]string, 0, len(a))
	for _, k := range a {
		if slices.Contains(b, k) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// HasAny reports whether held contains at least one of the wanted keys; an
// empty wanted list is always satisfied.
func HasAny(held, wanted []string) bool {
	if len(wanted) == 0 {
		return true
	}
	return slices.ContainsFunc(wanted, func(k string) bool { return slices.Contains(held, k) })
}

// ValidatePermissionKeys refuses unknown keys (field names the member).
func ValidatePermissionKeys(field string, keys []string) error {
	for _, k := range keys {
		if len(k) > permissionKeyMaxLen || !KnownPermission(k) {
			return Invalid(field, CodeValidationFailed, "unknown permission key %q", k)
		}
	}
	return nil
}

// AnyOneOf names keys of which any one would do, for a sentence: the key
// itself, or "any one of: a, b" when there are several.
func AnyOneOf(keys []string) string {
	if len(keys) == 1 {
		return keys[0]
	}
	return "any one of: " + strings.Join(keys, ", ")
}

// Forbidden is the 403 forbidden refusal of a caller none of whose
// permission keys (lacking names them, e.g. "the token's effective
// scopes") is among keys, any one of which would do: Required lists keys,
// the detail names them ("any one of" when there are several) and Remedy
// says what to do, a sentence.
func Forbidden(lacking string, keys []string, remedy string) *Error {
	d := "this needs the permission key " + AnyOneOf(keys) + "; it is not among " + lacking
	if len(keys) > 1 {
		d = "this needs " + AnyOneOf(keys) + "; none is among " + lacking
	}
	return &Error{Kind: KindForbidden, Code: CodeForbidden, Required: keys, Detail: d, Remedy: remedy}
}

// AskForRole is the remedy of a person lacking keys (any one of which would
// do): a role with one of them.
func AskForRole(keys []string) string {
	return "Ask an administrator for a role with " + AnyOneOf(keys) + "."
}

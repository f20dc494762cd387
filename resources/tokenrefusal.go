package resources

// Words of the 401 refusals of a presented token: each says what the caller
// does next in its remedy.

// remedyMintNew ends the remedy of a token that can no longer be used.
const remedyMintNew = "a person with api-tokens-admin-global mints a new token in the portal (API tokens)."

// RemedyTokenInvalid is the remedy of 401 token_invalid: the value was
// mistyped, cut short, or never issued here.
const RemedyTokenInvalid = "Send the value exactly as the portal showed it (svc_pat_… or svc_sat_…); " +
	"if it is lost, " + remedyMintNew

// Unauthorized builds a 401 refusal with its remedy.
func Unauthorized(code, remedy, format string, args ...any) *Error {
	e := Errorf(KindUnauthorized, code, format, args...)
	e.Remedy = remedy
	return e
}

// tokenRefusal is the 401 refusal of a found token that cannot be used:
// revoked, expired, owner disabled, or address not allowed (addr: the
// client's address as the server saw it).
func tokenRefusal(code string, c *Credential, addr string) *Error {
	switch code {
	case CodeTokenRevoked:
		return Unauthorized(code, "Revocation is final: "+remedyMintNew, "the token was revoked")
	case CodeTokenExpired:
		return Unauthorized(code, "A person with api-tokens-admin-global extends it or mints a new one "+
			"in the portal (API tokens).", "the token expired at %s", day(c.Token.ExpiresAt))
	case CodePrincipalDisabled:
		what := "the token's owner (" + c.Owner.Email + ") is deactivated"
		if c.Owner.Kind != PrincipalUser {
			what = "the token's service account (" + c.Owner.Name + ") is disabled"
		}
		return Unauthorized(code, "Its tokens stop with it: use a token of an active person or "+
			"service account.", "%s", what)
	}
	return Unauthorized(CodeTokenIPNotAllowed, "Call from one of the token's allowed networks, or ask "+
		"for a token that allows this address (behind a proxy, the server's --trusted-proxies decides "+
		"which address it sees).", "the token may not be used from address %s", addr)
}

package portal

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"

	"platformapi/resources"
)

// The create-token form carries a single-use id: a random nonce and its
// HMAC under the login key bound to the browser's session. The token
// minted from it records the nonce, so a resubmitted form (a reload of the
// answer that showed the value) mints nothing (resources.ErrTokenFormUsed).

// formID is a fresh id for the create-token form of r's session.
func (h *Handler) formID(r *http.Request) string {
	nonce := rand.Text()
	return nonce + "." + base64.RawURLEncoding.EncodeToString(h.formMAC(r, nonce))
}

// formMAC binds nonce to r's session (its cookie's id, which only the
// session's browser holds).
func (h *Handler) formMAC(r *http.Request, nonce string) []byte {
	var sid string
	if c, err := r.Cookie(sessionCookie); err == nil {
		sid = c.Value
	}
	return h.mac("mint-form|" + sid + "|" + nonce) // a login payload holds no "|"
}

// errFormID refuses a create-token form whose id is missing, forged or of
// another session.
var errFormID = resources.Invalid("form_id", resources.CodeValidationFailed,
	"this form was not issued to your session (it is out of date, or from another session); "+
		"check it and create the token again")

// formNonce is the nonce of the posted form's id, checked against r's
// session.
func (h *Handler) formNonce(r *http.Request) (string, error) {
	nonce, sig, ok := strings.Cut(r.PostForm.Get("form_id"), ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || nonce == "" || err != nil || !hmac.Equal(got, h.formMAC(r, nonce)) {
		return "", errFormID
	}
	return nonce, nil
}

// mintedAlready answers a resubmitted create form: the token exists, its
// value was shown once and is not shown again.
func (h *Handler) mintedAlready(w http.ResponseWriter, r *http.Request, p resources.Session) {
	h.render(w, r, http.StatusConflict, mintedAgainTemplate, view{Title: "Token already created", Person: &p})
}

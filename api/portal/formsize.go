package portal

import (
	"errors"
	"net/http"
	"strconv"

	"platformapi/api"
)

// formMax bounds a portal form's body: the largest form (a new role with
// every key ticked, a token's networks) needs a few KiB.
const formMax = 64 << 10

// formLimits are the forms that take another bound than formMax: the
// licence bundle gets what the API's PUT /licence takes (its body limit),
// so a long bundle is refused by the bundle's own rule in words, not by
// size; the demo sign-in posts one e-mail address.
var formLimits = map[string]int64{
	Path + "admin/licence": api.MaxBodyBytes,
	Path + "demo-login":    demoFormMax,
}

// formLimit is the bound of the form posted to path.
func formLimit(path string) int64 {
	if n, ok := formLimits[path]; ok {
		return n
	}
	return formMax
}

// readForm reads a posted form within its bound before any route acts on
// it (the routes' own ParseForm then finds it read). A larger body answers
// a 413 page and nothing is done; one that cannot be read, a 400 page.
// It reports whether the request may go on.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return true
	}
	limit := formLimit(r.URL.Path)
	var err error
	if r.ContentLength > limit {
		err = &http.MaxBytesError{Limit: limit}
	} else {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		err = r.ParseForm()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.refuse(w, r, http.StatusRequestEntityTooLarge, "What you sent is larger than this form takes (at most "+
			strconv.FormatInt(limit>>10, 10)+" KiB); nothing was changed. Shorten what you entered and send it again.")
		return false
	case err != nil:
		h.refuse(w, r, http.StatusBadRequest, "This form could not be read; nothing was changed.")
		return false
	}
	return true
}

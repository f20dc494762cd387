package bunstore_test

import (
	"strings"
	"testing"

	"platformapi/bunstore"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// TestTokenMinter_NoPepper_RefusalSaysWhereItIsSet: minting a token or a
// node key without the token pepper is 503 api_tokens_unconfigured whose
// detail names where an operator sets the pepper.
func TestTokenMinter_NoPepper_RefusalSaysWhereItIsSet(t *testing.T) {
	t.Parallel()
	m := bunstore.TokenMinter{Store: bunstore.NewStore(pgtest.DB(t))}
	by := resources.Actor{Label: "ops@example.test"}
	_, tokenErr := m.CreateToken(t.Context(), by, resources.NewToken{Name: "t", Days: 1})
	_, keyErr := m.MintNodeKey(t.Context(), by, "gpu-1")
	for name, err := range map[string]error{"token": tokenErr, "node key": keyErr} {
		e, ok := resources.AsError(err)
		if !ok || e.Code != resources.CodeAPITokensUnconfigured ||
			!strings.Contains(e.Detail, "PLATFORMAPI_TOKEN_PEPPER") ||
			!strings.Contains(e.Detail, "--token-pepper-file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

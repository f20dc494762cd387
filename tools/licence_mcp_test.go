package tools

import (
	"testing"

	"platformapi/resources"
	"platformapi/resources/licencetest"
)

// TestMCP_GetLicence_SerialMaskedForTheCallersScopes: the licence tool
// answers what REST answers for the same token, serial masking included.
func TestMCP_GetLicence_SerialMaskedForTheCallersScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t).enableAPI()
	for scope, serial := range map[string]string{
		resources.PermLicenceRead:  "****-****-****-MNOP",
		resources.PermLicenceAdmin: licencetest.Serial,
	} {
		res := call(t, e.client(e.token(scope), nil, false), "get-licence", map[string]any{})
		l, _ := res.StructuredContent.(map[string]any)
		if res.IsError || l["state"] != "valid" || l["serial"] != serial {
			t.Fatalf("%s: %s", scope, resultText(t, res))
		}
	}
}

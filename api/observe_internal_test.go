package api

import "testing"

func TestRouteName_KebabCaseUnderThePrefix(t *testing.T) {
	for pattern, want := range map[string]string{"/api/v1/openapi.json": "openapi-json",
		"/api/v1/openapi-3.0.yaml": "openapi-3-0-yaml", "/api/v1/docs": "docs", "/x/{file}": "x-file"} {
		if got := routeName(pattern); got != want {
			t.Errorf("routeName(%q) = %q, want %q", pattern, got, want)
		}
	}
}

package provider

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

func TestMembers_NullableFromTheGeneratedTypes(t *testing.T) {
	got := members(platformclient.CustomerPatch{})
	want := map[string]bool{"billing_tier": false, "customer_index": false, "default_email_tier": false,
		"edition": false, "long_name": false, "notes": true, "primary_contact_email": false,
		"primary_contact_name": false, "short_name": false, "status": false, "vcs_group": false}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("CustomerPatch members (-want +got):\n%s", d)
	}
}

// objectOf is kind k's object with the given attributes set (others null).
func objectOf(t *testing.T, k *kind, set map[string]any) attrs {
	t.Helper()
	ty := k.schema.Type().TerraformType(context.Background()).(tftypes.Object)
	v, err := objectFromJSON(ty, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objectAttrs(v)
}

func TestBody_MergePatchSendsOnlyChangedMembers_NullOnlyWhereNullable(t *testing.T) {
	r := &genericResource{k: customerKind}
	state := objectOf(t, customerKind, map[string]any{"id": "1", "short_name": "ACME", "long_name": "Acme",
		"notes": "n", "billing_tier": "INTERNAL", "customer_index": json.Number("4"), "status": "active"})
	plan := objectOf(t, customerKind, map[string]any{"id": "1", "short_name": "ACME", "long_name": "Acme Corp",
		"billing_tier": "INTERNAL", "customer_index": json.Number("4")}) // notes and status left out
	got, err := r.body(plan, customerKind.patchType, state)
	if err != nil {
		t.Fatal(err)
	}
	want := record{"long_name": "Acme Corp", "notes": nil} // status is not nullable: never null
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("patch (-want +got):\n%s", d)
	}
	raw, _ := json.Marshal(mustTyped[platformclient.CustomerPatch](t, got))
	if string(raw) != `{"long_name":"Acme Corp","notes":null}` {
		t.Fatalf("sent %s", raw)
	}
}

func mustTyped[T any](t *testing.T, m record) T {
	v, err := typed[T](m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTyped_RefusesMembersTheOperationLacks(t *testing.T) {
	if _, err := typed[platformclient.AIModelCreate](record{"repo": "a/b", "nas_path": "/x"}); err == nil {
		t.Fatal("nas_path accepted in a create body")
	}
}

func TestIdempotencyKey_SameConfigSameKey_OtherConfigOtherKey(t *testing.T) {
	a := idempotencyKey("platformapi_customer", record{"short_name": "ACME", "long_name": "Acme"})
	b := idempotencyKey("platformapi_customer", record{"long_name": "Acme", "short_name": "ACME"})
	c := idempotencyKey("platformapi_customer", record{"short_name": "ACME", "long_name": "Acme 2"})
	d := idempotencyKey("platformapi_tenant", record{"short_name": "ACME", "long_name": "Acme"})
	s := supersededKey("platformapi_customer", a, "7")
	if a != b || a == c || a == d || s == a || s != supersededKey("platformapi_customer", a, "7") || len(a) > 255 {
		t.Fatalf("keys %q %q %q %q %q", a, b, c, d, s)
	}
}

func TestSameEmail_AcceptsTheServersNormalisation(t *testing.T) {
	tests := []struct {
		config, server string
		same           bool
	}{
		{"Jane@ACME.Example", "Jane@acme.example", true},
		{" Jane Doe <jane@Acme.example> ", "jane@acme.example", true},
		{"jane@bücher.example", "jane@xn--bcher-kva.example", true},
		{"Jane@acme.example", "jane@acme.example", false}, // the local part keeps its case
		{"jane@acme.example", "jane@other.example", false},
	}
	for _, tc := range tests {
		if got := sameEmail(tc.config, tc.server); got != tc.same {
			t.Errorf("sameEmail(%q, %q) = %t", tc.config, tc.server, got)
		}
	}
}

func TestAddError_ProblemFieldBecomesTheAttributePath(t *testing.T) {
	field := "benchmarks.mmlu"
	err := &apiError{Status: 422, Problem: platformclient.Problem{Code: "validation_failed", Detail: "bad",
		Field: &field, RequestId: "req_1"}}
	var diags diag.Diagnostics
	addError(&diags, "create AI model", err, map[string]bool{"benchmarks": true})
	d, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !d.Path().Equal(path.Root("benchmarks")) {
		t.Fatalf("diagnostic %#v has no path benchmarks", diags[0])
	}
	want := "bad\n\ncode: validation_failed (HTTP 422)\nfield: benchmarks.mmlu\nrequest_id: req_1"
	if d.Summary() != "platformapi: create AI model failed: validation_failed" || d.Detail() != want {
		t.Fatalf("summary %q detail %q", d.Summary(), d.Detail())
	}
}

func TestToJSON_NumbersKeepTheirValue(t *testing.T) {
	for in, want := range map[string]string{"42": "42", "7.5": "7.5", "1000000": "1000000", "0.57": "0.57"} {
		f, _, _ := big.ParseFloat(in, 10, 512, big.ToNearestEven)
		if got := toJSON(tftypes.NewValue(tftypes.Number, f)); got != json.Number(want) {
			t.Errorf("%s → %v", in, got)
		}
	}
}

func TestAddWarnings_EveryWarningOfTheAnswer(t *testing.T) {
	var diags diag.Diagnostics
	addWarnings(&diags, record{"id": "1", "warnings": []any{
		map[string]any{"code": "vcs_group_failed", "message": "the group could not be created"}}})
	if len(diags) != 1 || diags[0].Severity() != diag.SeverityWarning ||
		diags[0].Summary() != "platformapi: vcs_group_failed" || diags[0].Detail() != "the group could not be created" {
		t.Fatalf("diagnostics %v", diags)
	}
}

package provider

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// Issue 18: a customer that ever had a project can never be archived (the
// contract counts retired projects), so "retire them first" sent users in
// circles; the diagnostic says what holds instead.
func TestDiagnostic_CustomerHasProjects_SaysRetiredOnesCountAndWhatToDo(t *testing.T) {
	blockers := map[string]int64{"projects": 2}
	var diags diag.Diagnostics
	addError(&diags, "delete customer", &apiError{Status: 409, Problem: platformclient.Problem{
		Code: codeCustomerHasProjects, Detail: "customer 1 has 2 projects (retired ones count)", Blockers: &blockers,
	}}, nil)
	if len(diags) != 1 {
		t.Fatalf("%d diagnostics", len(diags))
	}
	got := diags[0].Summary() + "\n" + diags[0].Detail()
	for _, want := range []string{"cannot be archived", "retired projects count", "terraform state rm",
		"blockers: projects: 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("the diagnostic does not say %q:\n%s", want, got)
		}
	}
}

// A 403 forbidden carries a remedy but no licence state: its diagnostic
// said "licence state: " (empty) above the remedy, as if the licence were
// at fault.
func TestDiagnostic_Forbidden_NamesNoLicence(t *testing.T) {
	required := []string{"releases-read-global"}
	remedy := "Ask an administrator for a token with releases-read-global."
	var diags diag.Diagnostics
	addError(&diags, "read PROD data lock", &apiError{Status: 403, Problem: platformclient.Problem{
		Code: "forbidden", Detail: "this needs the permission key releases-read-global", Required: &required,
		Remedy: &remedy, RequestId: "req_1",
	}}, nil)
	want := "this needs the permission key releases-read-global\n\ncode: forbidden (HTTP 403)\n" +
		"required (any one): releases-read-global\nremedy: " + remedy + "\nrequest_id: req_1"
	if d := cmp.Diff(want, diags[0].Detail()); d != "" {
		t.Errorf("detail (-want +got):\n%s", d)
	}
}

// A tenant that holds or held a project can never be deleted either
// (retired projects count); its refusal said so but not what to do with
// the Terraform resource, as the customer's does.
func TestDiagnostic_TenantNotEmpty_SaysRetiredOnesCountAndWhatToDo(t *testing.T) {
	blockers := map[string]int64{"projects": 1}
	var diags diag.Diagnostics
	addError(&diags, "delete tenant", &apiError{Status: 409, Problem: platformclient.Problem{
		Code: "tenant_not_empty", Detail: "tenant 8 holds 1 project(s) (retired ones count)", Blockers: &blockers,
	}}, nil)
	got := diags[0].Summary() + "\n" + diags[0].Detail()
	for _, want := range []string{"cannot be deleted", "retired projects count", "terraform state rm",
		"blockers: projects: 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("the diagnostic does not say %q:\n%s", want, got)
		}
	}
}

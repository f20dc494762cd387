package provider

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// codeDestroyNotAllowed is the API's refusal of a destroy by a token
// without Allow destroy.
const codeDestroyNotAllowed = "destroy_not_allowed"

// codeCustomerHasProjects refuses to archive a customer that has or had
// projects: retired ones count, so it can never be archived.
const codeCustomerHasProjects = "customer_has_projects"

// customerProjectsHint says what a refused customer destroy means for
// Terraform and what to do instead.
const customerProjectsHint = "A customer that has or had projects cannot be archived: retired projects count " +
	"too (the contract keeps their names reserved), so retiring them does not help. To stop managing the " +
	"customer with Terraform, remove it from the state instead: terraform state rm <address>. It stays on " +
	"the platform, as its projects do."

// codeTenantNotEmpty refuses to delete a tenant that holds or held
// projects: retired ones count, so it can never be deleted.
const codeTenantNotEmpty = "tenant_not_empty"

// tenantProjectsHint says what a refused tenant destroy means for Terraform.
const tenantProjectsHint = "A tenant that holds or held projects cannot be deleted: retired projects count " +
	"too (their names stay reserved), so retiring them does not help. To stop managing the tenant with " +
	"Terraform, remove it from the state instead: terraform state rm <address>. It stays on the platform, " +
	"as its projects do."

// codePreconditionFailed is the API's refusal of a conditional write
// (If-Match) to something that changed since the version sent.
const codePreconditionFailed = "precondition_failed"

// staleHint tells what a 412 means for Terraform and what to do (%s: the object).
const staleHint = "The %s changed outside Terraform after Terraform last read it: its version is no longer " +
	"the one in the Terraform state, which the update sent as If-Match. Nothing was changed, so the change " +
	"made outside Terraform is not overwritten unseen. Run terraform plan (or terraform apply) again: the " +
	"refresh reads the current state, and the new plan shows what applying the configuration would change."

// tokenDestroyHint names the token setting a destroy needs.
const tokenDestroyHint = "The provider's token (the `token` argument or PLATFORMAPI_TOKEN) must be an API " +
	"token minted with Allow destroy: in the portal (/portal/tokens on the server), Profile, API tokens, " +
	"Create token, tick Allow destroy " +
	"(or `platformapi portal token create --allow-destroy`). allow_destroy = true in the provider block is " +
	"the provider's own switch; the API still needs the token's."

// tokenRefusedHint says which setting holds the token a 401 refused, and
// where tokens are made (the value is never shown).
const tokenRefusedHint = "The API refused the provider's token (the `token` argument or PLATFORMAPI_TOKEN). " +
	"Tokens are created, extended and revoked only in the portal (/portal/tokens on the server: Profile, " +
	"API tokens); set a live token of this installation, with the scopes this configuration needs, and " +
	"run Terraform again."

// apiOffHint says what a 404 not_found means: no object is missing.
const apiOffHint = "Every /api/v1 path answers 404 not_found while the API is turned off in the portal " +
	"settings (an administrator turns it on), to a client outside the installation's allowed networks, " +
	"or when base_url is not the installation's portal address. It does not mean the object is gone: " +
	"the Terraform state keeps it. Check base_url and that the API is on, then run Terraform again."

// addError reports err from doing what (for example "create customer") as
// a diagnostic: a problem document gives its code, detail and field, and
// the field becomes the attribute path when the schema has that attribute.
func addError(diags *diag.Diagnostics, what string, err error, attributes map[string]bool) {
	var e *apiError
	if !errors.As(err, &e) {
		diags.AddError("platformapi: "+what+" failed", err.Error())
		return
	}
	p := e.Problem
	summary, detail := explained(what, e)
	if p.Field != nil {
		if root := fieldRoot(*p.Field); attributes[root] {
			diags.AddAttributeError(path.Root(root), summary, detail)
			return
		}
	}
	diags.AddError(summary, detail)
}

// explained is the summary and detail of the problem e from doing what,
// with what it means for Terraform where the problem alone does not say.
func explained(what string, e *apiError) (summary, detail string) {
	summary = fmt.Sprintf("platformapi: %s failed: %s", what, orHTTP(e.Problem.Code, e.Status))
	detail = problemDetail(e)
	switch e.Problem.Code {
	case codeDestroyNotAllowed:
		summary = "platformapi: " + what + " refused: the API token has no Allow destroy"
		detail += "\n\n" + tokenDestroyHint
	case codeCustomerHasProjects:
		summary = "platformapi: " + what + " refused: the customer has projects and cannot be archived"
		detail = customerProjectsHint + "\n\n" + detail
	case codeTenantNotEmpty:
		summary = "platformapi: " + what + " refused: the tenant has projects and cannot be deleted"
		detail = tenantProjectsHint + "\n\n" + detail
	case codePreconditionFailed:
		_, obj, _ := strings.Cut(what, " ")
		summary = fmt.Sprintf("platformapi: %s refused: the %s changed outside Terraform", what, obj)
		detail = fmt.Sprintf(staleHint, obj) + "\n\n" + detail
	case codeNotFound:
		detail += "\n\n" + apiOffHint
	}
	if e.Status == http.StatusUnauthorized {
		detail += "\n\n" + tokenRefusedHint
	}
	return summary, detail
}

func orHTTP(code string, status int) string {
	if code != "" {
		return code
	}
	return fmt.Sprintf("HTTP %d", status)
}

// problemDetail lists what the problem document says.
func problemDetail(e *apiError) string {
	p := e.Problem
	lines := []string{p.Detail}
	if p.Errors != nil { // why each member was refused (never its value)
		for _, d := range *p.Errors {
			if d.Message != nil {
				lines = append(lines, strings.TrimPrefix(deref(d.Location)+": ", ": ")+*d.Message)
			}
		}
	}
	lines = append(lines, "", fmt.Sprintf("code: %s (HTTP %d)", orHTTP(p.Code, e.Status), e.Status))
	if p.Field != nil {
		lines = append(lines, "field: "+*p.Field)
	}
	if p.Required != nil {
		lines = append(lines, "required (any one): "+strings.Join(*p.Required, ", "))
	}
	if p.Blockers != nil {
		var bs []string
		for k, n := range *p.Blockers {
			bs = append(bs, fmt.Sprintf("%s: %d", k, n))
		}
		sort.Strings(bs)
		lines = append(lines, "blockers: "+strings.Join(bs, ", "))
	}
	if p.State != nil { // a licence_* refusal
		lines = append(lines, "licence state: "+*p.State)
	}
	if p.Remedy != nil {
		lines = append(lines, "remedy: "+*p.Remedy)
	}
	if p.RequestId != "" {
		lines = append(lines, "request_id: "+p.RequestId)
	}
	return strings.Join(lines, "\n")
}

// fieldRoot is the attribute a problem's field names: its first segment
// ("benchmarks.mmlu" → "benchmarks", "components[1]" → "components").
func fieldRoot(field string) string {
	end := strings.IndexAny(field, ".[")
	if end < 0 {
		return field
	}
	return field[:end]
}

// addWarnings shows the warnings of a successful answer (a later step that
// did not complete, such as vcs_group_failed): the change stands.
func addWarnings(diags *diag.Diagnostics, rec record) {
	ws, _ := rec["warnings"].([]any)
	for _, w := range ws {
		m, _ := w.(map[string]any)
		diags.AddWarning(fmt.Sprintf("platformapi: %v", m["code"]), fmt.Sprint(m["message"]))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

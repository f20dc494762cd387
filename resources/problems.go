package resources

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Kinds of entries in the problem-code catalogue.
const (
	CodeKindProblem        = "problem"         // the code of an error answer (a problem document)
	CodeKindWarning        = "warning"         // the code of a warning on a successful answer
	CodeKindOperationError = "operation_error" // the code of a failed operation's error
)

// Codes that only a failed operation carries (Operation.error.code).
const (
	CodePipelineFailed  = "pipeline_failed"  // the release pipeline reported the deployment failed
	CodePipelineRefused = "pipeline_refused" // the release pipeline refused the dispatch
	// CodePipelineUnavailable: the release pipeline could not be reached
	// through the dispatch's last attempt.
	CodePipelineUnavailable = "pipeline_unavailable"
	CodeReleaseRejected     = "release_rejected" // a person rejected the prod promotion
)

// CodeRequestCancelled answers an MCP tool call its own client cancelled
// (status 499, "client closed request").
const CodeRequestCancelled = "request_cancelled"

// CodeResultTooLarge is answered to an MCP tool call whose result would pass
// its token budget; ask for fewer members or fewer items.
const CodeResultTooLarge = "result_too_large"

// ProblemCode is one entry of the problem-code catalogue: every code the
// server can answer, in a problem document, a warning or a failed operation.
type ProblemCode struct {
	Code    string `json:"code"`
	Kind    string `json:"kind"`             // CodeKindProblem, CodeKindWarning or CodeKindOperationError
	Status  int    `json:"status,omitempty"` // the HTTP status of a problem; 0 otherwise
	Meaning string `json:"meaning"`          // what it means and what to do, for people and agents
	Retry   bool   `json:"retry"`            // the same request can succeed later (after Retry-After when sent)
	// Next is the operation (REST operation id, MCP tool name) that helps
	// recover, such as the list that shows valid ids; "" when none does.
	Next string `json:"next,omitempty"`
}

// p, w and o build catalogue entries.
func p(code string, status int, meaning string) ProblemCode {
	return ProblemCode{Code: code, Kind: CodeKindProblem, Status: status, Meaning: meaning}
}

func (c ProblemCode) retry() ProblemCode { c.Retry = true; return c }

func (c ProblemCode) next(op string) ProblemCode { c.Next = op; return c }

// Problems returns the problem-code catalogue, sorted by code: the one list
// behind the MCP resource and GET /problems. A test checks that every code
// the code base declares is in it.
func Problems() []ProblemCode {
	out := slices.Concat(requestProblems(), authProblems(), notFoundProblems(), conflictProblems(),
		invalidProblems(), licenceBrandProblems(), otherCodes(), nodeAgentCodes())
	slices.SortFunc(out, func(a, b ProblemCode) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// ProblemByCode finds a code in the catalogue.
func ProblemByCode(code string) (ProblemCode, bool) {
	c, ok := problemIndex()[code]
	return c, ok
}

// RetryAfterWords ends the detail of every answer a retry cures later: it
// names retry_after_seconds, the member an MCP agent sees, with the header
// an HTTP client sees.
const RetryAfterWords = "retry_after_seconds (the Retry-After header)"

// ProblemTitle is the title of code's problem type (RFC 9457: a short
// summary that does not change from one occurrence to the next): the HTTP
// reason phrase of its status in the catalogue, the title a REST problem of
// that type has; for a code without one (an operation error), the code in
// words: pipeline_failed is "Pipeline failed".
func ProblemTitle(code string) string {
	if c, ok := ProblemByCode(code); ok && http.StatusText(c.Status) != "" {
		return http.StatusText(c.Status)
	}
	words := strings.ReplaceAll(code, "_", " ")
	if words == "" {
		return ""
	}
	return strings.ToUpper(words[:1]) + words[1:]
}

// problemIndex is the catalogue by code, built once.
var problemIndex = sync.OnceValue(func() map[string]ProblemCode {
	m := map[string]ProblemCode{}
	for _, c := range Problems() {
		m[c.Code] = c
	}
	return m
})

func requestProblems() []ProblemCode {
	return []ProblemCode{
		p("invalid_parameter", 400, "A path or query parameter (an MCP tool argument) is invalid; `field` names it, "+
			"`errors` say why (valid values or pattern). Fix the argument; over MCP, `next_tool` names "+
			"the tool listing valid values of a missing or invalid id."),
		p(CodeInvalidCursor, 400, "The cursor was not issued for this list and these filters; start again without one."),
		p(CodeInvalidIdempotencyKey, 400, "The Idempotency-Key header is empty, not 1 to 255 printable characters, or sent more than once."),
		p("malformed_body", 422, "The request body is missing, could not be read or is not one JSON value."),
		p("method_not_allowed", 405, "The path exists but not with this method; Allow lists the methods it "+
			"takes (HEAD wherever GET)."),
		p("body_too_large", 413, "The request body is larger than the limit (1 MiB)."),
		p("request_timeout", 408, "The request body arrived too slowly; the connection is closed. Send it again.").retry(),
		p(CodeResultTooLarge, 413, "An MCP tool result would pass its token budget (8,000 estimated tokens for a "+
			"list called without limit, 25,000 otherwise); pass fields to keep only the members needed, or read "+
			"the record over REST."),
		p("unsupported_media_type", 415, "The body's Content-Type is not one the operation accepts (see Accept-Post "+
			"or Accept-Patch)."),
		p(CodeRequestCancelled, 499, "MCP: the client cancelled the call (notifications/cancelled); it was "+
			"stopped and nothing more was done for it."),
		p(CodeRateLimited, 429, "The token's budget is spent: at most 600 units, refilled at 10 a second (an MCP "+
			"tool call costs 2, any other MCP message 1); wait retry_after_seconds.").retry(),
		p(CodeIdempotencyInProgress, 429, "A request with this Idempotency-Key is still running; retry after "+
			"Retry-After to get its answer.").retry(),
		p("internal", 500, "An internal error; quote the request id to the operator."),
		p(CodeUnavailable, 503, "A service the request needs is briefly unavailable; retry after Retry-After.").retry(),
		p(CodeAPITokensUnconfigured, 503, "API tokens are not configured on this installation; an operator must "+
			"set the token pepper (PLATFORMAPI_TOKEN_PEPPER or serve's --token-pepper-file). Retrying does "+
			"not help."),
	}
}

func authProblems() []ProblemCode {
	return []ProblemCode{
		p(CodeNotAuthenticated, 401, "No bearer token was sent: send Authorization: Bearer <API token>."),
		p(CodeTokenInvalid, 401, "The token is malformed, fails its checksum or is unknown."),
		p(CodeTokenExpired, 401, "The token has expired; a person extends it or mints a new one in the portal."),
		p(CodeTokenRevoked, 401, "The token was revoked."),
		p(CodeGatewayKeyRequired, 401, "AI gateway: no key was sent; send Authorization: Bearer <gateway key> "+
			"(sk-gw-…)."),
		p(CodeGatewayKeyInvalid, 401, "AI gateway: the key is malformed, unknown, revoked or was rotated away, "+
			"or Authorization was sent twice; ask for a new key (or the rotated value)."),
		p(CodeGatewayKeyExpired, 401, "AI gateway: the key has passed its expires_at; ask for a new key."),
		p(CodePrincipalDisabled, 401, "The token's owner is deactivated or disabled."),
		p(CodeTokenIPNotAllowed, 401, "The token may not be used from this client address."),
		p(CodeForbidden, 403, "The caller lacks the permission keys in `required` (any one would do); "+
			"`remedy` says what to ask an administrator for."),
		p(CodeRoleNotGrantable, 403, "The caller cannot give a role unless it holds every permission key "+
			"the role carries; the detail and `remedy` name the keys it lacks (every one is needed)."),
		p(CodeDestroyNotAllowed, 403, "The operation destroys; it needs a token created with Allow destroy."),
		p("origin_not_allowed", 403, "The Origin of this POST /mcp is not loopback nor an allowed origin "+
			"(--mcp-allowed-origins)."),
		p(CodeSignInRequired, 403, "Portal: the acting person must be an active, signed-in user."),
	}
}

func notFoundProblems() []ProblemCode {
	return []ProblemCode{
		p(CodeNotFound, 404, "No such path, or the API is turned off."),
		p(CodeAIModelNotFound, 404, "No catalogue row has this id.").next("list-ai-models"),
		p(CodeAINodeNotFound, 404, "No AI node has this hostname.").next("list-ai-nodes"),
		p(CodeAPITokenNotFound, 404, "No API token has this id.").next("list-api-tokens"),
		p(CodeAuditEventNotFound, 404, "No audit event has this id.").next("list-audit-events"),
		p(CodeCustomerNotFound, 404, "No customer has this id.").next("list-customers"),
		p(CodeGatewayKeyNotFound, 404, "No AI gateway key has this id.").next("list-ai-gateway-keys"),
		p(CodeNodeCacheNotFound, 404, "The node holds no cache of this model.").next("list-node-caches"),
		p(CodeOperationNotFound, 404, "No operation has this id.").next("list-operations"),
		p(CodeProjectNotFound, 404, "No project has this id.").next("list-projects"),
		p(CodeReleaseOperationNotFound, 404, "No release operation with this id is visible.").
			next("list-fleet-release-operations"),
		p(CodeRoleNotFound, 422, "A role named in the request does not exist."),
		p(CodeServiceAccountNotFound, 404, "No service account has this id or name.").next("list-service-accounts"),
		p(CodeTenantNotFound, 404, "No tenant has this id.").next("list-tenants"),
		p(CodeUserNotFound, 404, "No user has this id.").next("list-users"),
	}
}

func conflictProblems() []ProblemCode {
	return []ProblemCode{
		p(CodeConflict, 409, "The resource is being changed concurrently; retry.").retry(),
		p(CodeIdempotencyKeyReused, 409, "The Idempotency-Key was used with a different request; use a new key."),
		p(CodeIdempotencyLeaseLost, 409, "The idempotent request lost its lease to a retry; retry with the same key.").
			retry(),
		p(CodeAIModelHasWeights, 409, "Only a planned model without node caches can be removed (`blockers`)."),
		p(CodeAIModelNotInStore, 409, "The model has no central copy to copy onto a node."),
		p(CodeAIModelRepoTaken, 409, "Another catalogue row has this repo.").next("list-ai-models"),
		p(CodeCannotDeactivateSelf, 409, "Nobody can deactivate themself."),
		p(CodeCustomerArchived, 409, "The customer is archived: it cannot change nor take new tenants or projects."),
		p(CodeCustomerHasProjects, 409, "The customer has or had projects (`blockers`; retired ones count): it "+
			"can never be archived."),
		p(CodeCustomerIndexExhausted, 409, "Every customer index 1 to 999 is taken."),
		p(CodeCustomerIndexTaken, 409, "Another customer has this customer_index."),
		p(CodeEmailTaken, 409, "Another user has this e-mail address."),
		p(CodeGatewayKeyRevoked, 409, "The AI gateway key is revoked."),
		p(CodeLastAdministrator, 409, "The change would leave no active administrator."),
		p(CodeNameTaken, 409, "The name is taken."),
		p(CodeNodeCacheBusy, 409, "Another copy or removal runs on this node cache; poll its operation.").retry(),
		p(CodeNotAwaitingApproval, 409, "Portal: the release operation does not await approval."),
		p(CodeProdLocked, 409, "The PROD data lock refuses data copies into PROD."),
		p(CodeProjectDomainTaken, 409, "The domain belongs to another project (retired ones included)."),
		p(CodeProjectNameTaken, 409, "The short name belongs to another project (retired ones included)."),
		p(CodeProjectReadOnly, 409, "The platform's own projects are read-only."),
		p(CodeProjectRetired, 409, "The project is retired. Also a failed promotion's error (operation "+
			"error): its project was retired before it was dispatched, so it never was."),
		p(CodeReleaseNotDispatched, 409, "Portal: the release was not dispatched to the pipeline."),
		p(CodeRoleTaken, 409, "A role with this name exists."),
		p(CodeShortNameTaken, 409, "Another customer has this short name."),
		p(CodeSlugTaken, 409, "The slug is taken by a tenant or a customer's vcs_group."),
		p(CodeTenantIsPrimary, 409, "The primary tenant of a live customer cannot be deleted."),
		p(CodeTenantNotEmpty, 409, "The tenant still has projects."),
		p(CodeUserDeactivated, 409, "The user is deactivated and cannot be changed."),
		p(CodeVCSGroupCollision, 409, "A code-host group the platform cannot adopt holds this path."),
		p(CodeVCSGroupTaken, 409, "Another customer has this vcs_group."),
	}
}

func invalidProblems() []ProblemCode {
	return []ProblemCode{
		p(CodeValidationFailed, 422, "The body is invalid; `field` names the first offending member, `errors` all."),
		p(CodeImmutableField, 422, "A frozen member was sent with another value than its current one."),
		p(CodeReadOnlyField, 422, "A read-only member was sent with another value than its current one."),
		p(CodeApprovalNoteRequired, 422, "Portal: a requester approves their own promotion only with a note."),
		p(CodeComponentNotEnabled, 422, "The project does not enable this component.").next("get-project"),
		p(CodeInventoryInvalid, 422, "Portal: the inventory file is invalid; every problem is listed."),
		p(CodeScopeNotAllowed, 422, "Portal: a scope or permission the person (or owner) does not hold."),
		p(CodeTenantOfOtherClient, 422, "The tenant belongs to another customer.").next("list-tenants"),
		p(CodeUnlockNotConfirmed, 422, "Unlocking needs confirm_unlock equal to the project's short name."),
		p(CodeVersionNotAtSource, 422, "The version is not what the environment below last reported.").
			next("get-release-state"),
		p(CodeVersionRequired, 422, "A promotion to dev needs a version."),
		p(CodeVMProjectsUnsupported, 422, "Promotions apply to container-cluster projects only."),
	}
}

func licenceBrandProblems() []ProblemCode {
	return []ProblemCode{
		p(CodeLicenceRequired, 403, "No licence is installed: reads work, writes are refused; `remedy` says how "+
			"to install one (PUT /licence).").next("get-licence"),
		p(CodeLicenceLocked, 403, "The licence has expired past its grace period or no longer verifies: writes "+
			"are refused until a valid one is installed.").next("get-licence"),
		p(CodeLicenceRestricted, 403, "The licence lacks the feature this write needs, or a licence limit "+
			"(such as the number of customers) is reached.").next("get-licence"),
		p(CodeLicenceBundleInvalid, 422, "The licence bundle's form, signature, dates or installation id do not "+
			"hold; the detail starts with what failed. Nothing changed."),
		p(CodeBrandAssetNotFound, 404, "No brand asset with this id.").next("list-brand-assets"),
		p(CodeBrandAssetInvalid, 422, "A brand member names no asset, or an asset of another kind.").
			next("list-brand-assets"),
		p(CodeAssetTypeMismatch, 422, "The uploaded bytes are not of the declared Content-Type."),
		p(CodePreconditionFailed, 412, "If-Match (or the version sent) is not the current version, which "+
			"the ETag header names; nothing changed. Read the brand again and resend.").next("get-brand"),
	}
}

func otherCodes() []ProblemCode {
	w := func(code, meaning string) ProblemCode {
		return ProblemCode{Code: code, Kind: CodeKindWarning, Meaning: meaning}
	}
	o := func(code, meaning string) ProblemCode {
		return ProblemCode{Code: code, Kind: CodeKindOperationError, Meaning: meaning}
	}
	return []ProblemCode{
		w(CodeVCSGroupFailed, "The customer was created but its code-host group could not be created or adopted."),
		w(CodeValueShownOnce, "A replayed answer leaves out the key value: it is shown only once, by the "+
			"first answer."),
		w(CodeVCSStatusUnavailable, "The code host could not be reached; vcs_status is null."),
		o(CodePipelineFailed, "The release pipeline reported that the deployment failed."),
		o(CodePipelineRefused, "The release pipeline refused the dispatch."),
		o(CodePipelineUnavailable, "The release pipeline could not be reached through the dispatch's last "+
			"attempt; nothing was deployed. Request the promotion again."),
		o(CodeReleaseRejected, "A person rejected the prod promotion; the reason is in the detail."),
	}
}

// nodeAgentCodes are the codes of node-cache writes that a node agent
// carries out: a 409 and the errors a cache operation can end with.
func nodeAgentCodes() []ProblemCode {
	o := func(code, meaning string) ProblemCode {
		return ProblemCode{Code: code, Kind: CodeKindOperationError, Meaning: meaning}
	}
	return []ProblemCode{
		p(CodeNodeAgentNotEnrolled, 409, "The node has no agent to copy with: it needs an agent_url in the "+
			"inventory and a node key (portal node-key).").next("get-ai-node"),
		o(CodeNodeAgentUnreachable, "The node agent could not be reached (network, timeout, a refused node key) "+
			"through every retry; nothing became ready. Retry the write once the agent answers."),
		o(CodeNodeKeyRefused, "In an operation's retry (not its error): the node agent refused the "+
			"node key. Put the key portal node-key printed into the agent's --key-file; the tries "+
			"spent, the operation fails node_agent_unreachable."),
		o(CodeChecksumMismatch, "A copied file's sha256 differs from the central copy's SHA256SUMS; nothing "+
			"became ready. The detail names the file."),
		o(CodeInsufficientDisk, "The model does not fit in what the node's cache may still use; checked before "+
			"the first byte. The detail gives the bytes needed and free."),
		o(CodeCentralCopyInvalid, "The model's central copy cannot be copied: no or a malformed SHA256SUMS, a "+
			"listed file missing, or a path leading out of the store."),
		o(CodeNodeAgentRefused, "The node agent refused the request; the detail says why."),
		o(CodeCopyCancelled, "A removal of the cache (DELETE) stopped the copy; the removal deletes what "+
			"it wrote. The detail names the removal's operation."),
	}
}

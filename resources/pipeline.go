package resources

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
)

// PromotionDispatch is what the platform hands the release pipeline: deploy
// Component of the project at Version to TargetEnv. ReleaseOperationID is the
// dispatch's idempotency key; the worker may hand the same promotion over more
// than once, and every adapter treats repeats of one id as one promotion.
type PromotionDispatch struct {
	ReleaseOperationID int64  `json:"release_operation_id"`
	ProjectID          int64  `json:"project_id"`
	ProjectShortName   string `json:"project_short_name"`
	Component          string `json:"component"`  // app-api or www
	SourceEnv          string `json:"source_env"` // "" for dev
	TargetEnv          string `json:"target_env"` // dev, uat or prod
	Version            string `json:"version"`
	RequestedBy        string `json:"requested_by"`
}

// IdempotencyKey is the key every adapter sends with the dispatch:
// "release:<release_operation_id>", equal for every repeat of one promotion.
func (d PromotionDispatch) IdempotencyKey() string {
	return "release:" + strconv.FormatInt(d.ReleaseOperationID, 10)
}

// DeployReport is what a release pipeline reports when a deploy ended,
// whatever started it (an API promotion, the portal, a push). On success the
// platform records Version as deployed to Env for Component, with the time
// of the report and By, and ends the matching open promotion if there is one.
type DeployReport struct {
	ReleaseOperationID int64 // 0: match the running promotion by project, env, component and version
	ProjectID          int64
	Env                string // dev, uat or prod
	Component          string // app-api or www
	Version            string
	By                 string // "pipeline:<run id>"
	Succeeded          bool
	Reason             string // on failure: why the run failed, in words for people
}

// VersionPattern is what a deployable version looks like (1 to 64
// characters), in a promotion and in a pipeline's report.
var VersionPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// CheckUnmatchedDeploy checks a successful report that no open promotion
// accounts for (a deploy started in the portal or by a push) before it is
// recorded: a dev, uat or prod environment, a component the project enables
// and a well-formed version.
func CheckUnmatchedDeploy(p Project, r DeployReport) error {
	switch {
	case r.Env != EnvDev && r.Env != EnvUAT && r.Env != EnvProd:
		return Invalid("env", CodeValidationFailed, "unknown environment %q; one of dev, uat, prod", r.Env)
	case !slices.Contains(p.Components, r.Component):
		return Invalid("component", CodeComponentNotEnabled, "component %q is not enabled on project %d", r.Component, p.ID)
	case !VersionPattern.MatchString(r.Version):
		return Invalid("version", CodeValidationFailed, "version %q is not 1 to 64 letters, digits, '_', '.', '-'", r.Version)
	}
	return nil
}

// DeployReporter records a pipeline's report. The store implements it, and
// `platformapi portal deploy report` calls it too.
type DeployReporter interface {
	ReportDeploy(ctx context.Context, r DeployReport) error
}

// ReleasePipeline starts promotions.
//
// Dispatch returns once the pipeline accepted the run; the outcome arrives
// later through a DeployReporter. Dispatching a release operation id again is
// safe: it never starts a second deployment. An error wrapping
// ErrPipelineUnavailable means the dispatch may be retried later; any other
// error means a retry of the same dispatch will not succeed. No error message
// ever carries a credential.
type ReleasePipeline interface {
	Dispatch(ctx context.Context, d PromotionDispatch) error
}

// ErrPipelineUnavailable marks a dispatch that failed for a reason that may
// pass (network, timeout, 408, 429, 5xx, a pipeline that is down); adapters
// wrap it with %w.
var ErrPipelineUnavailable = errors.New("release pipeline unavailable")

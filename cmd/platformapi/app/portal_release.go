package app

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"platformapi/resources"
)

// portalRelease groups the release decisions only a person makes, what a
// pipeline reports, and data-copy booking.
func portalRelease(opts *Options, out io.Writer) []*cobra.Command {
	release := &cobra.Command{Use: "release", Short: "Decide prod promotions"}
	release.AddCommand(releaseDecision(opts, out, true), releaseDecision(opts, out, false))
	deploy := &cobra.Command{Use: "deploy", Short: "What a release pipeline reports"}
	deploy.AddCommand(deployReport(opts, out))
	copyCmd := &cobra.Command{Use: "data-copy", Short: "Data copies between environments"}
	copyCmd.AddCommand(dataCopyBook(opts, out))
	return []*cobra.Command{release, deploy, copyCmd}
}

func releaseDecision(opts *Options, out io.Writer, approve bool) *cobra.Command {
	var as, text string
	use := map[bool]string{true: "approve ID", false: "reject ID"}[approve]
	short := map[bool]string{
		true:  "Approve a prod promotion awaiting approval (a requester only with --note)",
		false: "Reject a prod promotion awaiting approval: it ends failed with --reason",
	}[approve]
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			id, err := positiveID("id", args[0])
			if err != nil {
				return err
			}
			decide := m.store.RejectRelease
			if approve {
				decide = m.store.ApproveRelease
			}
			r, err := decide(c.Context(), resources.Actor{Label: as}, id, text)
			if err != nil {
				return err
			}
			return PrintJSON(out, releaseJSON(r))
		})}
	cmd.Flags().StringVar(&as, "as", "", "e-mail of the deciding person (required)")
	_ = cmd.MarkFlagRequired("as")
	if approve {
		cmd.Flags().StringVar(&text, "note", "", "note; required when the approver counts as the requester")
	} else {
		cmd.Flags().StringVar(&text, "reason", "", "why it is rejected (required)")
		_ = cmd.MarkFlagRequired("reason")
	}
	return cmd
}

func deployReport(opts *Options, out io.Writer) *cobra.Command {
	var r resources.DeployReport
	var failed bool
	cmd := &cobra.Command{Use: "report", Short: "Record a pipeline's report of a promotion", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			r.Succeeded = !failed
			ended, err := endedRelease(c.Context(), m, r.ReleaseOperationID)
			if err != nil {
				return err
			}
			if ended != nil {
				return PrintJSON(out, ended)
			}
			if err := m.store.ReportDeploy(c.Context(), r); err != nil {
				return err
			}
			return PrintJSON(out, map[string]any{"recorded": true})
		})}
	f := cmd.Flags()
	f.Int64Var(&r.ProjectID, "project", 0, "project id (required)")
	f.StringVar(&r.Env, "env", "", "environment: dev, uat or prod (required)")
	f.StringVar(&r.Component, "component", "", "app-api or www (required)")
	f.StringVar(&r.Version, "version", "", "the version deployed (required)")
	f.StringVar(&r.By, "by", "", "who reports, e.g. pipeline:RUN (required)")
	f.Int64Var(&r.ReleaseOperationID, "operation", 0, "the release operation id (default: the oldest open match)")
	f.BoolVar(&failed, "failed", false, "the run failed")
	f.StringVar(&r.Reason, "reason", "", "why it failed")
	for _, name := range []string{"project", "env", "component", "version", "by"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func dataCopyBook(opts *Options, out io.Writer) *cobra.Command {
	var as, from, to string
	var project int64
	cmd := &cobra.Command{Use: "book", Short: "Book a data copy (refused into PROD while the PROD data lock is set)", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			r, err := m.store.BookDataCopy(c.Context(), resources.Actor{Label: as}, project, from, to)
			if err != nil {
				return err
			}
			return PrintJSON(out, releaseJSON(r))
		})}
	f := cmd.Flags()
	f.Int64Var(&project, "project", 0, "project id (required)")
	f.StringVar(&from, "from", "", "source environment (required)")
	f.StringVar(&to, "to", "", "target environment (required)")
	f.StringVar(&as, "as", "", "e-mail of the booking person (required)")
	for _, name := range []string{"project", "from", "to", "as"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// releaseJSON is a release operation as the portal prints it.
func releaseJSON(r resources.ReleaseOperation) map[string]any {
	return map[string]any{"id": strconv.FormatInt(r.ID, 10), "operation_id": resources.ReleaseOperationRef(r.ID),
		"kind": r.Kind, "status": r.Status, "target_env": r.TargetEnv, "version": r.Version, "decision": r.Decision}
}

func positiveID(field, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, resources.Invalid(field, resources.CodeValidationFailed, "%s must be a positive integer", field)
	}
	return id, nil
}

// endedRelease is what `portal deploy report` prints for a report on
// release operation id when it has ended already (the store then changes
// nothing: pipelines may repeat), or nil; id 0 names none.
func endedRelease(ctx context.Context, m *Main, id int64) (map[string]any, error) {
	if id == 0 {
		return nil, nil
	}
	r, err := m.store.GetReleaseOperation(ctx, id)
	if err != nil || !resources.Finished(r.Status) {
		return nil, err
	}
	return map[string]any{"recorded": false, "status": r.Status, "detail": fmt.Sprintf(
		"release operation %d had already ended %s; this report changes nothing", id, r.Status)}, nil
}

// Command platformapi is the management API server of a cloud platform
// installation: `serve` runs the API and MCP, `migrate` manages the schema,
// `portal` carries out the actions reserved to a signed-in person, `eval`
// plays the agent evaluation suites. The commands live in package app.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"platformapi/cmd/platformapi/app"
	"platformapi/resources"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.NewRootCommand(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	if e, ok := resources.AsError(err); ok { // a refusal: JSON like every result
		_ = app.PrintJSON(os.Stdout, map[string]any{"error": map[string]any{"code": e.Code, "detail": e.Detail, "field": e.Field}})
	} else if !errors.Is(err, app.ErrSuitesFailed) { // failed suites were reported already
		fmt.Fprintln(os.Stderr, "platformapi:", err)
	}
	os.Exit(1)
}

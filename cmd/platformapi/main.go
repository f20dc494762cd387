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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.NewRootCommand(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	// A refusal prints JSON like every result; failed suites were reported.
	if !app.PrintRefusal(os.Stdout, err) && !errors.Is(err, app.ErrSuitesFailed) {
		fmt.Fprintln(os.Stderr, "platformapi:", err)
	}
	os.Exit(1)
}

// Command platformapi is the management API server of a cloud platform
// installation: `serve` runs the API and MCP, `migrate` manages the schema,
// `portal` carries out the actions reserved to a signed-in person.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"platformapi/resources"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand(os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if err != nil {
		if e, ok := resources.AsError(err); ok { // a refusal: JSON like every result
			_ = printJSON(os.Stdout, map[string]any{"error": map[string]any{"code": e.Code, "detail": e.Detail, "field": e.Field}})
		} else {
			fmt.Fprintln(os.Stderr, "platformapi:", err)
		}
		os.Exit(1)
	}
}

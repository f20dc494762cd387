package evals

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultStepTimeout bounds each HTTP request and portal call of a run
// when Options leave StepTimeout at 0.
const DefaultStepTimeout = 30 * time.Second

// errStepTimeout is the cause of a context whose step timeout ran out.
var errStepTimeout = errors.New("step timeout")

// stepTimeout is the bound of each HTTP request and portal call of a run.
func (o Options) stepTimeout() time.Duration {
	if o.StepTimeout > 0 {
		return o.StepTimeout
	}
	return DefaultStepTimeout
}

// within runs f with ctx bounded by d. When d runs out first, f's error
// (a cancelled request) becomes one that says what was being done and d;
// a cancellation of ctx itself keeps f's error.
func within(ctx context.Context, d time.Duration, what string,
	f func(context.Context) error,
) error {
	ctx, cancel := context.WithTimeoutCause(ctx, d, errStepTimeout)
	defer cancel()
	err := f(ctx)
	if err != nil && errors.Is(context.Cause(ctx), errStepTimeout) {
		return fmt.Errorf("%s: no answer within %s (--step-timeout)", what, d)
	}
	return err
}

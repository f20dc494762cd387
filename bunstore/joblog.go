package bunstore

import (
	"context"
	"log/slog"
)

// stopQuiet is the handler of River's logger. River logs at ERROR what its
// maintenance services could not finish when the worker stops them (the
// error "context canceled": a periodic insert cut short, say); a stop this
// process asked for is not a fault, so such a record is logged at INFO (and
// not at all where INFO is off). Every other record passes as it is.
type stopQuiet struct{ slog.Handler }

// Handle implements slog.Handler.
func (h stopQuiet) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && cancelledRecord(r) {
		r.Level = slog.LevelInfo
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h stopQuiet) WithAttrs(attrs []slog.Attr) slog.Handler {
	return stopQuiet{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h stopQuiet) WithGroup(name string) slog.Handler { return stopQuiet{h.Handler.WithGroup(name)} }

// cancelledRecord reports whether r's error is a cancelled context (River
// logs errors as their text).
func cancelledRecord(r slog.Record) bool {
	cancelled := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" && a.Value.String() == context.Canceled.Error() {
			cancelled = true
			return false
		}
		return true
	})
	return cancelled
}

package bunstore

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestStopQuiet_CancelledErrorsAtInfoOthersAsTheyAre: River's ERROR records
// of a cancelled context (what a stop cuts short) are logged at INFO, and
// not at all by a logger that shows errors only; any other record keeps
// its level.
func TestStopQuiet_CancelledErrorsAtInfoOthersAsTheyAre(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level slog.Level // the handler's
		err   string
		want  string // the level logged; "" none
	}{
		{"cancelled, info on", slog.LevelInfo, "context canceled", "INFO"},
		{"cancelled, errors only", slog.LevelError, "context canceled", ""},
		{"another error, errors only", slog.LevelError, "connection refused", "ERROR"},
		{"another error, info on", slog.LevelInfo, "deadline exceeded", "ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(stopQuiet{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})})
			log.With("service", "maintenance").Error("Error starting transaction", "error", tc.err)
			got := ""
			if _, rest, ok := strings.Cut(buf.String(), "level="); ok {
				got, _, _ = strings.Cut(rest, " ")
			}
			if got != tc.want {
				t.Fatalf("logged %q, want level %q", buf.String(), tc.want)
			}
		})
	}
}

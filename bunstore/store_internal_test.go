package bunstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"testing"
)

// TestRetryBegin_OnlyBadConnectionsOfALiveRequestAndBounded: a BEGIN that
// database/sql gave up on for bad connections is tried again while the
// request is live, a bounded number of times; any other failure, or a
// request whose client left, is not.
func TestRetryBegin_OnlyBadConnectionsOfALiveRequestAndBounded(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	wrapped := fmt.Errorf("begin: %w", driver.ErrBadConn)
	tests := []struct {
		name    string
		ctx     context.Context
		err     error
		attempt int
		want    bool
	}{
		{"bad connection, live request", live, driver.ErrBadConn, 1, true},
		{"wrapped bad connection", live, wrapped, 3, true},
		{"last attempt", live, driver.ErrBadConn, maxBeginAttempts, false},
		{"the client left", gone, driver.ErrBadConn, 1, false},
		{"another error", live, errors.New("permission denied"), 1, false},
		{"no error", live, nil, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryBegin(tt.ctx, tt.err, tt.attempt); got != tt.want {
				t.Fatalf("retryBegin = %v, want %v", got, tt.want)
			}
		})
	}
}

package api

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"platformapi/resources"
)

// unavailableRetryAfter is the Retry-After of a database or network fault.
const unavailableRetryAfter = time.Second

// faultProblem is the one place that classifies an error nobody mapped: a
// fault of the database or the network that a retry can cure (connection
// refused or broken, statement timeout, the request's deadline spent
// waiting for a connection, the server shutting down or overloaded) is 503
// unavailable with Retry-After; anything else is 500 internal. Either way
// the cause is logged with the request id, never shown.
func faultProblem(err error) *Problem {
	if transientFault(err) {
		return &Problem{Status: http.StatusServiceUnavailable, Code: resources.CodeUnavailable,
			Detail: "the service's database is unavailable or too slow; " +
				"retry after " + resources.RetryAfterWords,
			retryAfter: unavailableRetryAfter, cause: err}
	}
	return &Problem{Status: http.StatusInternalServerError, cause: err}
}

// transientFault reports whether err is a database or network fault that a
// retry can cure. It recognises the driver's errors by behaviour (SQLSTATE,
// net.Error, SafeToRetry) so this package does not import the driver.
func transientFault(err error) bool {
	if err == nil {
		return false
	}
	for _, target := range []error{context.DeadlineExceeded, driver.ErrBadConn, sql.ErrConnDone,
		io.ErrUnexpectedEOF, net.ErrClosed, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		return transientSQLState(state.SQLState())
	}
	var nerr net.Error
	var retry interface{ SafeToRetry() bool }
	return errors.As(err, &nerr) || errors.As(err, &retry) && retry.SafeToRetry()
}

// transientSQLState reports whether a PostgreSQL error code is one a retry
// can cure: connection exceptions (08), insufficient resources (53),
// operator intervention (57: statement timeout, shutdown, starting up),
// system errors (58), serialization failures and deadlocks (40001, 40P01),
// a lock not available (55P03) and a read-only server (25006, a failover).
func transientSQLState(code string) bool {
	switch {
	case len(code) != 5:
		return false
	case code == "40001", code == "40P01", code == "55P03", code == "25006":
		return true
	}
	switch code[:2] {
	case "08", "53", "57", "58":
		return true
	}
	return false
}

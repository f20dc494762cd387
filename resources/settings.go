package resources

import (
	"context"
	"time"
)

// Settings are the installation's platform settings that the API depends on.
type Settings struct {
	APIEnabled bool      `json:"api_enabled"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// SettingsReader reads the platform settings.
type SettingsReader interface {
	Settings(ctx context.Context) (Settings, error)
}

// Versions reported by GET /meta and the OpenAPI document.
const (
	APIVersion      = "1.0.0"
	PlatformVersion = "1.0.187"
)

// Readiness tells whether the store can serve requests.
type Readiness interface {
	// PendingMigrations reaches the database and names the schema migrations
	// this binary carries that the database has not applied (none: ready).
	// An error means the database could not be reached or did not answer
	// before ctx ended.
	PendingMigrations(ctx context.Context) ([]string, error)
}

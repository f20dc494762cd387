package bunstore

import "context"

// PendingMigrations names the embedded migrations (ours and River's) the
// database has not applied; an error means it could not be read before ctx
// ended. It implements resources.Readiness.
func (s *Store) PendingMigrations(ctx context.Context) ([]string, error) {
	st, err := MigrationStatus(ctx, s.db)
	if err != nil {
		return nil, err
	}
	var pending []string
	for _, m := range st {
		if !m.Applied {
			pending = append(pending, m.Name)
		}
	}
	return pending, nil
}

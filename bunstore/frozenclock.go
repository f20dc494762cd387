package bunstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// frozenClockSQL makes every timestamp the database itself writes (column
// defaults and `SET x = now()`, with now() or clock_timestamp()) read the
// frozen clock instead: a trigger replaces each timestamptz column of a
// written row that lies between the transaction's start and this moment
// with the instant in platformapi_frozen_clock.
const frozenClockSQL = `
CREATE TABLE IF NOT EXISTS platformapi_frozen_clock (at timestamptz NOT NULL);
CREATE OR REPLACE FUNCTION platformapi_frozen_clock() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  frozen timestamptz;
  rec jsonb := to_jsonb(NEW);
  patch jsonb := '{}';
  col text;
BEGIN
  SELECT at INTO frozen FROM platformapi_frozen_clock LIMIT 1;
  IF frozen IS NULL THEN RETURN NEW; END IF;
  FOR col IN SELECT a.attname FROM pg_attribute a WHERE a.attrelid = TG_RELID AND a.attnum > 0
      AND NOT a.attisdropped AND a.atttypid = 'timestamptz'::regtype LOOP
    IF (rec->>col)::timestamptz BETWEEN now() AND clock_timestamp() THEN
      patch := patch || jsonb_build_object(col, frozen);
    END IF;
  END LOOP;
  IF patch = '{}' THEN RETURN NEW; END IF;
  RETURN jsonb_populate_record(NEW, patch);
END $$;`

// frozenTablesSQL lists the platform's tables holding timestamps (River's
// and the migration bookkeeping are left alone).
const frozenTablesSQL = `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND c.relname NOT LIKE 'river\_%' AND c.relname NOT LIKE 'bun\_%' AND c.relname <> 'platformapi_frozen_clock'
  AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
              AND a.atttypid = 'timestamptz'::regtype)
ORDER BY c.relname`

// FrozenClock is a clock that stands still at a settable instant, shared by
// the Go side (Now, for Store.SetClock and the API) and the database
// (timestamps written with now()). It exists for the demo world and the
// evaluation suites, which need two runs to give identical answers.
type FrozenClock struct {
	mu sync.Mutex
	t  time.Time
	db *bun.DB
}

// FreezeClock installs the frozen clock on the (migrated) database at and
// returns it. It is never done by a migration: only databases made for
// demos and evaluations get it. Installing it again just moves the clock.
func FreezeClock(ctx context.Context, db *bun.DB, at time.Time) (*FrozenClock, error) {
	if _, err := db.ExecContext(ctx, frozenClockSQL); err != nil {
		return nil, fmt.Errorf("frozen clock: %w", err)
	}
	var tables []string
	if err := db.NewRaw(frozenTablesSQL).Scan(ctx, &tables); err != nil {
		return nil, fmt.Errorf("frozen clock: %w", err)
	}
	for _, t := range tables {
		q := fmt.Sprintf(`DROP TRIGGER IF EXISTS platformapi_frozen_clock ON %[1]q;
CREATE TRIGGER platformapi_frozen_clock BEFORE INSERT OR UPDATE ON %[1]q
FOR EACH ROW EXECUTE FUNCTION platformapi_frozen_clock()`, t)
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("frozen clock on %s: %w", t, err)
		}
	}
	c := &FrozenClock{db: db}
	return c, c.Set(ctx, at)
}

// Now is the frozen instant (UTC).
func (c *FrozenClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock, on both sides, to at.
func (c *FrozenClock) Set(ctx context.Context, at time.Time) error {
	at = at.UTC().Truncate(time.Microsecond)
	err := c.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM platformapi_frozen_clock"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO platformapi_frozen_clock (at) VALUES (?)", at)
		return err
	})
	if err != nil {
		return fmt.Errorf("frozen clock: %w", err)
	}
	c.mu.Lock()
	c.t = at
	c.mu.Unlock()
	return nil
}

// ThawClock removes the frozen clock from the database, if installed (its
// triggers, their function and the instant): every timestamp the database
// writes reads the real clock again. The Go side is the caller's: stop
// using the FrozenClock's Now.
func ThawClock(ctx context.Context, db bun.IDB) error {
	if _, err := db.ExecContext(ctx, `DROP FUNCTION IF EXISTS platformapi_frozen_clock() CASCADE;
DROP TABLE IF EXISTS platformapi_frozen_clock`); err != nil {
		return fmt.Errorf("thawing the frozen clock: %w", err)
	}
	return nil
}

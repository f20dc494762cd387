package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"platformapi/api"
	"platformapi/bunstore"
	"platformapi/resources"
)

// benchDB is the database a run creates afresh; pepper hashes its tokens.
const (
	benchDB   = "platformapi_bench"
	pepper    = "bench-pepper-0123456789abcdef"
	adminMail = "bench@example.test"
	models    = 100_000
	events    = 1_000_000
	depth     = 990_000 // the audit page measured against page 1
)

// world is the seeded database: its DSN, a minter for token pools, the
// cursor of the audit page at depth and the public key (standard base64) of
// the licence the run installed.
type world struct {
	dsn         string
	db          *bun.DB
	store       *bunstore.Store
	minter      bunstore.TokenMinter
	depthCursor string
	licenceKey  string
	// gatewayValues are the values of the live gateway keys seeded for
	// the verify load.
	gatewayValues []string
}

// seed creates and fills the bench database, or with c.reuse keeps the one
// an earlier run filled (removing what its loads added), then installs a
// licence signed by a key made for this run.
func seed(ctx context.Context, c config) (*world, error) {
	w := &world{dsn: dsnFor(c.adminDSN, benchDB)}
	fresh := !c.reuse || !w.reusable(ctx)
	if fresh {
		if err := createDB(ctx, c.adminDSN); err != nil {
			return nil, err
		}
	}
	var err error
	if w.db, err = bunstore.Open(ctx, w.dsn); err != nil {
		return nil, err
	}
	if _, err := bunstore.Migrate(ctx, w.db); err != nil {
		return nil, err
	}
	w.store = bunstore.NewStore(w.db)
	w.minter = bunstore.TokenMinter{Store: w.store, Pepper: resources.Pepper(pepper)}
	if fresh {
		err = w.fill(ctx)
	} else {
		log.Printf("reusing %s (-reuse)", benchDB)
		err = w.clean(ctx)
	}
	if err != nil {
		return nil, err
	}
	if err := w.installLicence(ctx); err != nil {
		return nil, fmt.Errorf("licence: %w", err)
	}
	if err := w.seedGatewayKeys(ctx); err != nil {
		return nil, fmt.Errorf("gateway keys: %w", err)
	}
	if err := w.cursorAtDepth(ctx); err != nil {
		return nil, err
	}
	return w, w.settle(ctx)
}

// settle writes out what seeding or cleaning left for the disk before any
// load runs: a checkpoint of PostgreSQL, then sync(2) of the machine's
// dirty pages. Left to the background, that writeback (half a gigabyte
// after a fresh seed) lands in the first loads as stalls of 100–250 ms
// nobody's code makes (docs/benchmarks.md, tenth machine day).
func (w *world) settle(ctx context.Context) error {
	if _, err := w.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint (the bench's database user must be a superuser): %w", err)
	}
	syncDisks()
	return nil
}

func createDB(ctx context.Context, adminDSN string) error {
	admin, err := bunstore.Open(ctx, adminDSN)
	if err != nil {
		return err
	}
	defer admin.Close()
	for _, q := range []string{"DROP DATABASE IF EXISTS " + benchDB + " WITH (FORCE)", "CREATE DATABASE " + benchDB} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// fill makes the administrator, turns the API on and seeds the rows.
func (w *world) fill(ctx context.Context) error {
	if _, err := w.minter.CreateUser(ctx, resources.Actor{}, resources.NewUser{Email: adminMail, DisplayName: "Bench",
		Roles: []string{"admin"}}); err != nil {
		return err
	}
	if _, err := w.minter.SetAPIEnabled(ctx, resources.Actor{Label: adminMail}, true); err != nil {
		return err
	}
	for _, q := range seedSQL {
		if _, err := w.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.60s…: %w", q, err)
		}
	}
	return nil
}

// reusable reports whether the bench database holds a complete seed.
func (w *world) reusable(ctx context.Context) bool {
	db, err := bunstore.Open(ctx, w.dsn)
	if err != nil {
		return false
	}
	defer db.Close()
	var n int
	err = db.NewRaw(`SELECT (SELECT count(*) FROM ai_models WHERE id <= ?) +
		(SELECT count(*) FROM audit_events WHERE action = 'ai_model.update')`, models).Scan(ctx, &n)
	return err == nil && n == models+events
}

// clean removes what an earlier run's loads added (models created by the
// POST loads, their audit events and idempotency keys), so page 1 of the
// audit list holds seeded events again, and the tokens earlier runs minted
// (each lives a day), so the server holds this run's tokens alone: the
// memory target counts 2,000 live tokens, not every run's of the day.
func (w *world) clean(ctx context.Context) error {
	for _, q := range []string{
		`DELETE FROM ai_models WHERE repo LIKE 'bench-%'`,
		`DELETE FROM api_tokens WHERE name LIKE 'bench %'`,
		`DELETE FROM audit_events WHERE entity_type = 'ai_model' AND action <> 'ai_model.update'`,
		`TRUNCATE idempotency_keys`,
		`VACUUM ANALYZE ai_models`, `VACUUM ANALYZE audit_events`,
	} {
		if _, err := w.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.60s…: %w", q, err)
		}
	}
	return nil
}

// installLicence signs a licence (features ai and brand, valid for a day)
// with a key made for this run and installs it; the server trusts that key
// only (--licence-public-key), so writes pass the licence gate as on a
// licensed installation.
func (w *world) installLicence(ctx context.Context) error {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	st, err := w.store.StoredLicence(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	p := resources.LicencePayload{Serial: "BNCH-0000-0000-0001", InstallationID: st.InstallationID,
		Edition: "bench", Features: []string{resources.FeatureAI, resources.FeatureBrand}, Limits: map[string]int{},
		ValidFrom:  now.Add(-time.Minute).UTC().Truncate(time.Second),
		ValidUntil: now.AddDate(0, 0, 1).UTC().Truncate(time.Second)}
	bundle, err := resources.SignLicence(key, p)
	if err != nil {
		return err
	}
	if _, err := w.store.InstallLicenceAs(ctx, resources.Actor{Label: adminMail}, bundle, p); err != nil {
		return err
	}
	w.licenceKey = base64.StdEncoding.EncodeToString(pub)
	return nil
}

// seedSQL fills the catalogue (100,000 rows with realistic metadata, every
// tenth cached on two of 20 nodes) and the audit log (1,000,000 events).
var seedSQL = []string{
	`INSERT INTO ai_models (repo, display_name, gated, status, param_count_b, size_gb, category, vendor, org,
		summary, description, benchmarks, license, quant, context_window, gateway_tier)
	SELECT 'org' || (g % 97) || '/model-' || g, 'Model ' || g, g % 5 = 0, 'owned', g * 0.01, g * 0.02,
		(ARRAY['coding','agentic','reasoning','vision','general'])[1 + g % 5], 'Vendor ' || (g % 31),
		'org' || (g % 97), 'A capable open-weights model number ' || g || ' for benchmarks.',
		repeat('A longer description of the model, its training and its intended use. ', 4),
		jsonb_build_object('mmlu', 60 + g % 30, 'humaneval', 40 + g % 50, 'arena', 'n/a'),
		'apache-2.0', 'bf16', '128k', (ARRAY['small','medium','large'])[1 + g % 3]
	FROM generate_series(1, ` + strconv.Itoa(models) + `) g`,
	`INSERT INTO ai_nodes (hostname, site, gpu_class) SELECT 'gpu-' || g, 'fra1', 'H100' FROM generate_series(1, 20) g`,
	`INSERT INTO node_caches (hostname, model_id, status, path, size_gb)
	SELECT 'gpu-' || (1 + (m.id / 10 + k) % 20), m.id, 'ready', '/var/lib/platform/models/' || m.repo, m.size_gb
	FROM ai_models m, generate_series(0, 1) k WHERE m.id % 10 = 0`,
	`INSERT INTO audit_events (occurred_at, actor, action, entity_type, entity_id, auth_kind, request_id, after_state)
	SELECT now() - g * interval '1 second', 'person' || (g % 50) || '@example.test', 'ai_model.update', 'ai_model',
		(g % 100000)::text, 'pat', 'req_' || g, jsonb_build_object('id', g, 'notes', 'changed')
	FROM generate_series(1, ` + strconv.Itoa(events) + `) g`,
	`VACUUM ANALYZE`, // not left to autovacuum, which would run during the first loads
}

// auditQuery is the audit list both audit loads read: the seeded events
// (entity type ai_model), so page 1 and the page at depth hold events of
// the same size (the bench's own token mints are newer and larger).
const auditQuery = "/api/v1/audit-events?entity_type=ai_model&limit=50"

// cursorAtDepth builds the cursor a client holds after reading `depth`
// events of auditQuery's list (newest first). The filter is the one the
// server derives for the bench's tokens: they lack licence-admin-global, so
// licence serials are masked (a cursor is bound to that too).
func (w *world) cursorAtDepth(ctx context.Context) error {
	var at time.Time
	var id int64
	err := w.db.NewRaw(`SELECT occurred_at, id FROM audit_events WHERE entity_type = 'ai_model'
		ORDER BY occurred_at DESC, id DESC OFFSET ? LIMIT 1`, depth-1).Scan(ctx, &at, &id)
	if err != nil {
		return err
	}
	key, err := w.minter.ServerKey(ctx, "cursor")
	if err != nil {
		return err
	}
	cur := api.NewCursors(key).Encode("audit-events", resources.AuditFilter{EntityType: "ai_model", MaskLicenceSerials: true},
		[]string{at.UTC().Format(time.RFC3339Nano), strconv.FormatInt(id, 10)})
	w.depthCursor = *cur
	return nil
}

// tokens mints n tokens of the bench administrator, so that a load spread
// over them stays within each token's burst of 600 and its refill of 10 a second.
func (w *world) tokens(ctx context.Context, n int) ([]string, error) {
	scopes := []string{resources.PermAIRead, resources.PermAIWrite, resources.PermAuditRead}
	out := make([]string, 0, n)
	for i := range n {
		m, err := w.minter.CreateToken(ctx, resources.Actor{Label: adminMail}, resources.NewToken{Name: "bench " + strconv.Itoa(i),
			Scopes: scopes, Days: 1})

		if err != nil {
			return nil, err
		}
		out = append(out, m.Value)
	}
	return out, w.dropMintEvents(ctx)
}

// dropMintEvents removes the audit events of the bench's own token mints:
// newer than the seeded events, thousands of them would sit in front of
// page 1 of the audit loads (which filter by entity type and so scan past
// them), making page 1 slower than the seeded log alone, and more so with
// every -reuse run. Without them page 1 reads seeded events only, like the
// page at depth (the comparison is then the stricter one).
func (w *world) dropMintEvents(ctx context.Context) error {
	_, err := w.db.ExecContext(ctx, `DELETE FROM audit_events WHERE action = 'api_token.create'`)
	return err
}

func dsnFor(adminDSN, db string) string {
	u, err := url.Parse(adminDSN)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return adminDSN + " dbname=" + db
	}
	u.Path = "/" + db
	return u.String()
}

func redisAnswers(ctx context.Context, u string) bool {
	o, err := redis.ParseURL(u)
	if err != nil {
		return false
	}
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return c.Ping(ctx).Err() == nil
}

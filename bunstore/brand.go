package bunstore

import (
	"context"
	"encoding/hex"
	"reflect"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"platformapi/resources"
)

// brandRow is the bun model of brand (one row).
type brandRow struct {
	bun.BaseModel  `bun:"table:brand"`
	ID             int16     `bun:"id,pk" json:"-"`
	BrandColor     string    `bun:"brand_color" json:"brand_color"`
	LogoAssetID    *int64    `bun:"logo_asset_id" json:"logo_asset_id"`
	FaviconAssetID *int64    `bun:"favicon_asset_id" json:"favicon_asset_id"`
	FirstParty     bool      `bun:"first_party" json:"first_party"`
	Version        int       `bun:"version" json:"version"`
	UpdatedAt      time.Time `bun:"updated_at" json:"updated_at"`
}

func (r brandRow) brand() resources.Brand {
	return resources.Brand{BrandColor: r.BrandColor, LogoAssetID: r.LogoAssetID, FaviconAssetID: r.FaviconAssetID,
		FirstParty: r.FirstParty, Version: r.Version, UpdatedAt: r.UpdatedAt}
}

// brandAssetRow is the bun model of brand_assets; its audit state is
// brandAssetState.
type brandAssetRow struct {
	bun.BaseModel `bun:"table:brand_assets"`
	ID            int64     `bun:"id,pk,autoincrement" json:"id"`
	Kind          string    `bun:"kind" json:"kind"`
	ContentType   string    `bun:"content_type" json:"content_type"`
	SizeBytes     int       `bun:"size_bytes" json:"size_bytes"`
	SHA256        []byte    `bun:"sha256" json:"sha256"`
	Content       []byte    `bun:"content" json:"-"`
	CreatedBy     string    `bun:"created_by" json:"created_by"`
	CreatedAt     time.Time `bun:"created_at" json:"created_at"`
}

func (r brandAssetRow) asset() resources.BrandAsset {
	return resources.BrandAsset{ID: r.ID, Kind: r.Kind, ContentType: r.ContentType, SizeBytes: r.SizeBytes,
		SHA256: r.SHA256, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
}

// brandAssetState is an asset's audit state: its metadata without the
// bytes, the SHA-256 in lower-case hex as the API shows it.
type brandAssetState struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	ContentType string    `json:"content_type"`
	SizeBytes   int       `json:"size_bytes"`
	SHA256      string    `json:"sha256"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
}

func (r brandAssetRow) auditState() brandAssetState {
	return brandAssetState{ID: r.ID, Kind: r.Kind, ContentType: r.ContentType, SizeBytes: r.SizeBytes,
		SHA256: hex.EncodeToString(r.SHA256), CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
}

// assetColumns are the columns of an asset without its bytes.
var assetColumns = []string{"id", "kind", "content_type", "size_bytes", "sha256", "created_by", "created_at"}

// GetBrand reads the brand.
func (s *Store) GetBrand(ctx context.Context) (resources.Brand, error) {
	var row brandRow
	err := s.db.NewSelect().Model(&row).Where("id = 1").Scan(ctx)
	return row.brand(), err
}

// ReplaceBrand applies a PUT under the brand's row lock, so concurrent
// replaces apply one after another and a stale If-Match or version is 412
// with nothing changed. A replace that changes nothing keeps the version.
func (s *Store) ReplaceBrand(ctx context.Context, a resources.Actor, r resources.BrandReplace) (resources.Brand, error) {
	var out resources.Brand
	err := s.inTx(ctx, func(tx bun.Tx) error {
		var before brandRow
		if err := tx.NewSelect().Model(&before).Where("id = 1").For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		cur := before.brand()
		if err := cur.Preconditions(r); err != nil {
			return err
		}
		next, err := cur.Replace(r)
		if err != nil {
			return err
		}
		if err := checkAssetRefs(ctx, tx, next); err != nil {
			return err
		}
		out = cur
		if reflect.DeepEqual(next, cur) {
			return nil
		}
		after := before
		after.BrandColor, after.LogoAssetID, after.FaviconAssetID = next.BrandColor, next.LogoAssetID, next.FaviconAssetID
		after.Version++
		if err := updateRow(ctx, tx, &after); err != nil {
			return err
		}
		out = after.brand()
		return s.writeAudit(ctx, tx, auditEntry{actor: a, action: "brand.update", entityType: "brand", entityID: "brand",
			before: before, after: after})
	})
	return out, err
}

// checkAssetRefs checks that the logo and favicon name assets of their
// kind (locked against change while the replace commits).
func checkAssetRefs(ctx context.Context, tx bun.Tx, b resources.Brand) error {
	for _, ref := range []struct {
		field, kind string
		id          *int64
	}{
		{"logo_asset_id", resources.AssetKindLogo, b.LogoAssetID},
		{"favicon_asset_id", resources.AssetKindFavicon, b.FaviconAssetID},
	} {
		if ref.id == nil {
			continue
		}
		var found *resources.BrandAsset
		row, err := assetByID(ctx, tx, *ref.id, "SHARE")
		if err == nil {
			a := row.asset()
			found = &a
		} else if !noRows(err) {
			return err
		}
		if err := resources.CheckAssetRef(ref.field, ref.kind, *ref.id, found); err != nil {
			return err
		}
	}
	return nil
}

// assetByID reads an asset's metadata (sql.ErrNoRows when there is none).
func assetByID(ctx context.Context, db bun.IDB, id int64, lock string) (*brandAssetRow, error) {
	row := &brandAssetRow{}
	sel := db.NewSelect().Model(row).Column(assetColumns...).Where("id = ?", id)
	if lock != "" {
		sel.For(lock)
	}
	return row, sel.Scan(ctx)
}

func assetNotFound(id int64) error {
	return resources.NotFound(resources.CodeBrandAssetNotFound, "no brand asset %d", id)
}

// GetBrandAsset reads an asset's metadata.
func (s *Store) GetBrandAsset(ctx context.Context, id int64) (*resources.BrandAsset, error) {
	row, err := assetByID(ctx, s.db, id, "")
	if noRows(err) {
		return nil, assetNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	a := row.asset()
	return &a, nil
}

// BrandAssetContent reads an asset with its bytes.
func (s *Store) BrandAssetContent(ctx context.Context, id int64) (*resources.BrandAsset, []byte, error) {
	row := &brandAssetRow{}
	err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx)
	if noRows(err) {
		return nil, nil, assetNotFound(id)
	}
	if err != nil {
		return nil, nil, err
	}
	a := row.asset()
	return &a, row.Content, nil
}

// ListBrandAssets lists assets in id order, one keyset page.
func (s *Store) ListBrandAssets(ctx context.Context, f resources.BrandAssetFilter,
	q resources.PageQuery) (resources.Page[resources.BrandAsset], error) {
	sel, err := byID(s.db.NewSelect().Model((*brandAssetRow)(nil)).Column(assetColumns...), q.After)
	if err != nil {
		return resources.Page[resources.BrandAsset]{}, err
	}
	whereIn(sel, "kind", f.Kind)
	return scanPage(ctx, sel, q.Limit, brandAssetRow.asset, func(a resources.BrandAsset) []string { return idKey(a.ID) })
}

// CreateBrandAsset stores an upload, audited without its bytes. A keyed
// upload resumed after a crash answers the asset it already made.
func (s *Store) CreateBrandAsset(ctx context.Context, a resources.Actor, n resources.NewBrandAsset,
	l *resources.Lease) (resources.BrandAsset, error) {
	if id, resumed, err := resumedID(l, resources.RecoveryBrandAssetCreated); err != nil || resumed {
		return resumeCreate(ctx, id, err, s.GetBrandAsset)
	}
	var out resources.BrandAsset
	err := s.inTx(ctx, func(tx bun.Tx) error {
		row := &brandAssetRow{Kind: n.Kind, ContentType: n.ContentType, SizeBytes: len(n.Content), SHA256: n.SHA256,
			Content: n.Content, CreatedBy: a.Label}
		if _, err := tx.NewInsert().Model(row).ExcludeColumn("id", "created_at").
			Returning(strings.Join(assetColumns, ", ")).Exec(ctx); err != nil {
			return err
		}
		out = row.asset()
		return s.auditKeyed(ctx, tx, auditEntry{actor: a, action: "brand_asset.create",
			entityType: resources.EntityTypeBrandAsset, entityID: idString(row.ID),
			after: row.auditState()},
			recovery{lease: l, point: resources.RecoveryBrandAssetCreated, data: createdID{row.ID}, result: out})
	})
	return out, err
}

var _ resources.Brands = (*Store)(nil)

package resources

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// AI model status values; other values may appear (set by store actions
// outside v1).
const (
	AIModelPlanned = "planned"
	AIModelPulling = "pulling"
	AIModelOwned   = "owned"
	AIModelServing = "serving"
)

// AI model problem codes and the recovery point of a keyed create.
const (
	CodeAIModelNotFound    = "ai_model_not_found"
	CodeAIModelRepoTaken   = "ai_model_repo_taken"
	CodeAIModelHasWeights  = "ai_model_has_weights"
	CodeReadOnlyField      = "read_only_field"
	RecoveryAIModelCreated = "ai_model_created"
)

// AI model field bounds from the contract's limit table.
const (
	MaxAIModelRepoLen        = 96
	MaxAIModelDisplayNameLen = 255
	MaxParamCountB           = 9_999_999
	MaxSizeGB                = 99_999_999
	MaxBenchmarks            = 100
)

// AIModelRepoPattern is the shape of a model-hub repo id `org/name`: each
// part starts with a letter or digit and holds only letters, digits, `.`,
// `_`, `-`, never `..` (a dot is always followed by another character or
// ends the part).
const AIModelRepoPattern = `^[A-Za-z0-9](\.?[A-Za-z0-9_-])*\.?/[A-Za-z0-9](\.?[A-Za-z0-9_-])*\.?$`

var repoRE = regexp.MustCompile(AIModelRepoPattern)

// AIModelTextLimits are the maximum lengths, in characters, of the text
// metadata members of a catalogue row.
var AIModelTextLimits = map[string]int{
	"architecture": 40, "category": 24, "context_window": 20, "description": 20000, "frontier_equiv": 120,
	"gateway_tier": 40, "license": 80, "min_target": 40, "model_card_url": 300, "notes": 20000, "org": 120,
	"params": 60, "published": 20, "quant": 40, "serving_node": 80, "strong_axis": 40, "summary": 2000,
	"vendor": 200, "vendor_country": 40,
}

// Benchmarks maps a benchmark name to its published score: a number or a
// string. nil is null.
type Benchmarks map[string]any

// AIModelMeta is the writable, nullable metadata of a catalogue row; nil is
// null. The field order is shared with the storage and API copies, which
// convert to and from it.
type AIModelMeta struct {
	Architecture  *string    `json:"architecture"`
	Benchmarks    Benchmarks `json:"benchmarks"`
	Category      *string    `json:"category"`
	ContextWindow *string    `json:"context_window"`
	Description   *string    `json:"description"`
	FrontierEquiv *string    `json:"frontier_equiv"`
	GatewayTier   *string    `json:"gateway_tier"`
	License       *string    `json:"license"`
	MinTarget     *string    `json:"min_target"`
	ModelCardURL  *string    `json:"model_card_url"`
	Notes         *string    `json:"notes"`
	Org           *string    `json:"org"`
	ParamCountB   *float64   `json:"param_count_b"`
	Params        *string    `json:"params"`
	Published     *string    `json:"published"`
	Quant         *string    `json:"quant"`
	ServingNode   *string    `json:"serving_node"`
	SizeGB        *float64   `json:"size_gb"`
	StrongAxis    *string    `json:"strong_axis"`
	Summary       *string    `json:"summary"`
	Vendor        *string    `json:"vendor"`
	VendorCountry *string    `json:"vendor_country"`
}

// NodeCacheRef is one node's cached copy of a model's weights, as a
// catalogue row shows it.
type NodeCacheRef struct {
	Hostname  string
	Status    string
	SizeGB    *float64
	Path      *string
	UpdatedAt time.Time
}

// AIModel is a row of the AI model catalogue; it exists whether or not any
// weights are present.
type AIModel struct {
	ID            int64
	Repo          string
	DisplayName   string
	Gated         bool
	Status        string
	Location      *string
	OfflineReady  bool
	NASVolume     *string
	NASPath       *string
	ClusterRecipe *string
	AIModelMeta
	NodeCaches []NodeCacheRef // never nil when read from the store
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// AIModelCreate is a create request: repo and optional members (nil: the
// default).
type AIModelCreate struct {
	Repo        string
	DisplayName *string
	Gated       *bool
	AIModelMeta
}

// NewAIModel validates a create request and applies the defaults: the
// display name is the last part of the repo; the row starts planned, with no
// central copy and no node cache.
func NewAIModel(c AIModelCreate) (AIModel, error) {
	m := AIModel{Repo: c.Repo, Status: AIModelPlanned, AIModelMeta: c.AIModelMeta, NodeCaches: []NodeCacheRef{}}
	if err := ValidateRepo(c.Repo); err != nil {
		return AIModel{}, err
	}
	m.DisplayName = c.Repo[strings.LastIndexByte(c.Repo, '/')+1:]
	if c.DisplayName != nil {
		m.DisplayName = *c.DisplayName
	}
	if c.Gated != nil {
		m.Gated = *c.Gated
	}
	if err := validateDisplayName(m.DisplayName); err != nil {
		return AIModel{}, err
	}
	return m, m.AIModelMeta.Validate()
}

// ValidateRepo checks a model-hub repo id: AIModelRepoPattern, at most
// MaxAIModelRepoLen characters.
func ValidateRepo(repo string) error {
	if len(repo) > MaxAIModelRepoLen || !repoRE.MatchString(repo) {
		return Invalid("repo", CodeValidationFailed,
			"repo must be org/name: each part starts with a letter or digit and holds only letters, digits, '.', '_', '-' "+
				"(no '..'), at most %d characters", MaxAIModelRepoLen)
	}
	return nil
}

func validateDisplayName(s string) error {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxAIModelDisplayNameLen {
		return Invalid("display_name", CodeValidationFailed, "display_name must be 1 to %d characters", MaxAIModelDisplayNameLen)
	}
	return nil
}

// Validate checks every member against the contract's limits; the first
// offending member (in name order) is named.
func (m AIModelMeta) Validate() error {
	texts := m.texts()
	for _, name := range slices.Sorted(maps.Keys(texts)) {
		if v := texts[name]; v != nil && utf8.RuneCountInString(*v) > AIModelTextLimits[name] {
			return Invalid(name, CodeValidationFailed, "%s must be at most %d characters", name, AIModelTextLimits[name])
		}
	}
	if err := numberIn("param_count_b", m.ParamCountB, MaxParamCountB); err != nil {
		return err
	}
	if err := numberIn("size_gb", m.SizeGB, MaxSizeGB); err != nil {
		return err
	}
	return ValidateBenchmarks(m.Benchmarks)
}

// texts names every text member.
func (m AIModelMeta) texts() map[string]*string {
	return map[string]*string{
		"architecture": m.Architecture, "category": m.Category, "context_window": m.ContextWindow,
		"description": m.Description, "frontier_equiv": m.FrontierEquiv, "gateway_tier": m.GatewayTier,
		"license": m.License, "min_target": m.MinTarget, "model_card_url": m.ModelCardURL, "notes": m.Notes,
		"org": m.Org, "params": m.Params, "published": m.Published, "quant": m.Quant,
		"serving_node": m.ServingNode, "strong_axis": m.StrongAxis, "summary": m.Summary, "vendor": m.Vendor,
		"vendor_country": m.VendorCountry,
	}
}

func numberIn(field string, v *float64, limit float64) error {
	if v != nil && (*v < 0 || *v > limit) {
		return Invalid(field, CodeValidationFailed, "%s must be between 0 and %.0f", field, limit)
	}
	return nil
}

// ValidateBenchmarks checks a benchmarks object: at most MaxBenchmarks
// members, each a number or a string.
func ValidateBenchmarks(b Benchmarks) error {
	if len(b) > MaxBenchmarks {
		return Invalid("benchmarks", CodeValidationFailed, "benchmarks holds at most %d members", MaxBenchmarks)
	}
	for _, name := range slices.Sorted(maps.Keys(b)) {
		switch b[name].(type) {
		case float64, float32, int, int64, json.Number, string:
		default:
			return Invalid("benchmarks."+name, CodeValidationFailed, "a benchmark score is a number or a string")
		}
	}
	return nil
}

// CheckAIModelDelete allows deleting only a planned row without node caches.
// The refusal's blockers name both: node_caches (how many) and central_copy
// (1 unless planned: the weights are, or are being put, in the central store).
func CheckAIModelDelete(m AIModel, caches int) error {
	if m.Status == AIModelPlanned && caches == 0 {
		return nil
	}
	e := Errorf(KindConflict, CodeAIModelHasWeights,
		"model %d is %s with %d node caches; only a planned model without weights can be deleted", m.ID, m.Status, caches)
	central := 1
	if m.Status == AIModelPlanned {
		central = 0
	}
	e.Blockers = map[string]int{"node_caches": caches, "central_copy": central}
	return e
}

// AIModelFilter narrows and orders the catalogue list: filters are exact and
// combine; Q is a case-insensitive substring of repo, display_name or
// summary; Cached keeps the models with a ready node cache (CachedReady) or
// without one (CachedNone). Sort is "id" (default), "param_count_b" or
// "size_gb"; Order "asc" (default) or "desc"; nulls sort last either way.
type AIModelFilter struct {
	Status      []string `json:"status,omitempty"` // any of them (an open list of statuses)
	Category    string   `json:"category,omitempty"`
	Vendor      string   `json:"vendor,omitempty"`
	Org         string   `json:"org,omitempty"`
	GatewayTier string   `json:"gateway_tier,omitempty"`
	ServingNode string   `json:"serving_node,omitempty"`
	Gated       *bool    `json:"gated,omitempty"`
	Q           string   `json:"q,omitempty"`
	Cached      []string `json:"cached,omitempty"` // any of CachedReady, CachedNone
	Sort        string   `json:"sort,omitempty"`
	Order       string   `json:"order,omitempty"`
}

// AIModels stores the catalogue. Every write records one audit event in its
// transaction; CreateAIModel also records the idempotency recovery point and,
// resumed past it, returns the row already created.
type AIModels interface {
	ListAIModels(ctx context.Context, f AIModelFilter, q PageQuery) (Page[AIModel], error)
	GetAIModel(ctx context.Context, id int64) (*AIModel, error)
	CreateAIModel(ctx context.Context, a Actor, m AIModel, l *Lease) (AIModel, error)
	PatchAIModel(ctx context.Context, a Actor, id int64, p AIModelPatch) (AIModel, error)
	DeleteAIModel(ctx context.Context, a Actor, id int64) error
}

// AIModelPatch is a merge patch of a catalogue row: repo is frozen; status,
// location, offline_ready and nas_volume are read-only (their current value
// only); nas_path and cluster_recipe are never accepted.
type AIModelPatch struct {
	Repo, DisplayName, Status Patch[string]
	Gated, OfflineReady       Patch[bool]
	Location, NASVolume       Patch[string]
	Meta                      AIModelMetaPatch
}

// AIModelMetaPatch patches the nullable metadata; null clears a member.
type AIModelMetaPatch struct {
	Architecture, Category, ContextWindow, Description, FrontierEquiv, GatewayTier Patch[string]
	License, MinTarget, ModelCardURL, Notes, Org, Params, Published, Quant         Patch[string]
	ServingNode, StrongAxis, Summary, Vendor, VendorCountry                        Patch[string]
	ParamCountB, SizeGB                                                            Patch[float64]
	Benchmarks                                                                     Patch[Benchmarks]
}

// Apply returns the row after the patch. Only the members sent are checked
// against the limits, so a row imported with longer values stays editable.
func (m AIModel) Apply(p AIModelPatch) (AIModel, error) {
	for _, err := range []error{
		Frozen("repo", p.Repo, m.Repo),
		ReadOnly("status", p.Status, m.Status), ReadOnlyNullable("location", p.Location, m.Location),
		ReadOnly("offline_ready", p.OfflineReady, m.OfflineReady), ReadOnlyNullable("nas_volume", p.NASVolume, m.NASVolume),
	} {
		if err != nil {
			return m, err
		}
	}
	if p.DisplayName.Set {
		if err := validateDisplayName(p.DisplayName.Value); err != nil {
			return m, err
		}
	}
	if err := (AIModelMeta{}).apply(p.Meta).Validate(); err != nil {
		return m, err
	}
	Apply(&m.DisplayName, p.DisplayName)
	Apply(&m.Gated, p.Gated)
	m.AIModelMeta = m.AIModelMeta.apply(p.Meta)
	return m, ValidateBenchmarks(m.Benchmarks) // the limit holds for the merged result
}

// apply sets or clears every member the patch sends.
func (m AIModelMeta) apply(p AIModelMetaPatch) AIModelMeta {
	for dst, src := range map[**string]Patch[string]{
		&m.Architecture: p.Architecture, &m.Category: p.Category, &m.ContextWindow: p.ContextWindow,
		&m.Description: p.Description, &m.FrontierEquiv: p.FrontierEquiv, &m.GatewayTier: p.GatewayTier,
		&m.License: p.License, &m.MinTarget: p.MinTarget, &m.ModelCardURL: p.ModelCardURL, &m.Notes: p.Notes,
		&m.Org: p.Org, &m.Params: p.Params, &m.Published: p.Published, &m.Quant: p.Quant,
		&m.ServingNode: p.ServingNode, &m.StrongAxis: p.StrongAxis, &m.Summary: p.Summary, &m.Vendor: p.Vendor,
		&m.VendorCountry: p.VendorCountry,
	} {
		ApplyNullable(dst, src)
	}
	ApplyNullable(&m.ParamCountB, p.ParamCountB)
	ApplyNullable(&m.SizeGB, p.SizeGB)
	switch {
	case !p.Benchmarks.Set:
	case p.Benchmarks.Null:
		m.Benchmarks = nil
	default: // RFC 7396: merged member by member; a null member removes it
		m.Benchmarks = Benchmarks(MergeObject(m.Benchmarks, p.Benchmarks.Value))
	}
	return m
}

// ReadOnly checks a read-only member: it may be sent only with its current
// value; another value is 422 read_only_field.
func ReadOnly[T comparable](field string, p Patch[T], current T) error {
	if p.Set && (p.Null || p.Value != current) {
		return readOnly(field)
	}
	return nil
}

// ReadOnlyNullable checks a nullable read-only member: null matches a null
// current value, a value matches an equal one.
func ReadOnlyNullable[T comparable](field string, p Patch[T], current *T) error {
	switch {
	case !p.Set, p.Null && current == nil, !p.Null && current != nil && *current == p.Value:
		return nil
	}
	return readOnly(field)
}

func readOnly(field string) error {
	return Invalid(field, CodeReadOnlyField, "%s is read-only; send its current value or omit it", field)
}

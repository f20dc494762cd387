package api

import (
	"context"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// AIModelMetadata is the writable, nullable metadata of a catalogue row: in
// the create body (each member optional, null means unset) and in the record
// (each member present, null when unset). Its fields match
// resources.AIModelMeta one for one.
type AIModelMetadata struct {
	Architecture  *string              `json:"architecture" required:"false" nullable:"true" maxLength:"40" doc:"dense or moe, …"`
	Benchmarks    resources.Benchmarks `json:"benchmarks" required:"false" nullable:"true" doc:"Benchmark name to score (number or string), as published, not measured; at most 100 members"`
	Category      *string              `json:"category" required:"false" nullable:"true" maxLength:"24" doc:"coding, agentic, reasoning, vision, embedding, rerank, general, speech, video, …"`
	ContextWindow *string              `json:"context_window" required:"false" nullable:"true" maxLength:"20" doc:"Human form"`
	Description   *string              `json:"description" required:"false" nullable:"true" maxLength:"20000" doc:"Longer introduction"`
	FrontierEquiv *string              `json:"frontier_equiv" required:"false" nullable:"true" maxLength:"120" doc:"Rough comparison to a hosted frontier model; an estimate"`
	GatewayTier   *string              `json:"gateway_tier" required:"false" nullable:"true" maxLength:"40" doc:"AI gateway serving tier it is meant for; recorded only"`
	License       *string              `json:"license" required:"false" nullable:"true" maxLength:"80" doc:"Model licence as recorded"`
	MinTarget     *string              `json:"min_target" required:"false" nullable:"true" maxLength:"40" doc:"Smallest hardware, human form"`
	ModelCardURL  *string              `json:"model_card_url" required:"false" nullable:"true" maxLength:"300" doc:"Web address of the model card"`
	Notes         *string              `json:"notes" required:"false" nullable:"true" maxLength:"20000" doc:"Free-form operator notes"`
	Org           *string              `json:"org" required:"false" nullable:"true" maxLength:"120" doc:"Model-hub organisation; may be a quantizer rather than the vendor"`
	ParamCountB   *float64             `json:"param_count_b" required:"false" nullable:"true" minimum:"0" maximum:"9999999" doc:"Parameters in billions, to sort by"`
	Params        *string              `json:"params" required:"false" nullable:"true" maxLength:"60" doc:"Human form"`
	Published     *string              `json:"published" required:"false" nullable:"true" maxLength:"20" doc:"Upstream release, as recorded"`
	Quant         *string              `json:"quant" required:"false" nullable:"true" maxLength:"40" doc:"Precision or quantisation, as recorded"`
	ServingNode   *string              `json:"serving_node" required:"false" nullable:"true" maxLength:"80" doc:"AI node hostname or GPU cluster where it is meant to be served; recorded only"`
	SizeGB        *float64             `json:"size_gb" required:"false" nullable:"true" minimum:"0" maximum:"99999999" doc:"Weights size on disk in GB"`
	StrongAxis    *string              `json:"strong_axis" required:"false" nullable:"true" maxLength:"40" doc:"What it is strongest at"`
	Summary       *string              `json:"summary" required:"false" nullable:"true" maxLength:"2000" doc:"One-line introduction"`
	Vendor        *string              `json:"vendor" required:"false" nullable:"true" maxLength:"200" doc:"The lab that built it"`
	VendorCountry *string              `json:"vendor_country" required:"false" nullable:"true" maxLength:"40" doc:"Vendor's home country"`
}

// NodeCacheRef is one node's cached copy of a model's weights.
type NodeCacheRef struct {
	Hostname  string    `json:"hostname" example:"gpu-01"`
	Status    string    `json:"status" doc:"copying, ready, removing, missing (agent no longer reports it), …"`
	SizeGB    *float64  `json:"size_gb" nullable:"true"`
	Path      *string   `json:"path" nullable:"true" doc:"Where the copy is on the node's disk"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AIModel is a row of the AI model catalogue as the API shows it.
type AIModel struct {
	ID            string         `json:"id" example:"3"`
	Repo          string         `json:"repo" example:"Qwen/Qwen3-Coder-30B-A3B-Instruct" doc:"Model-hub repo id; frozen"`
	DisplayName   string         `json:"display_name"`
	Gated         bool           `json:"gated" doc:"The repo needs an access approval before a pull"`
	Status        string         `json:"status" doc:"Read-only: planned, pulling, owned or serving, …"`
	Location      *string        `json:"location" nullable:"true" doc:"Read-only: nas, local or both; null: nowhere yet, …"`
	OfflineReady  bool           `json:"offline_ready" doc:"Read-only: a node holds a cached copy"`
	NASVolume     *string        `json:"nas_volume" nullable:"true" doc:"Read-only: central-store share holding the weights"`
	NASPath       *string        `json:"nas_path" nullable:"true" doc:"Where the central copy is"`
	ClusterRecipe *string        `json:"cluster_recipe" nullable:"true" doc:"Serving recipe a GPU cluster runs it with"`
	NodeCaches    []NodeCacheRef `json:"node_caches"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at" doc:"Equals created_at until the first change"`
	AIModelMetadata
}

// AIModelCreate is the body of POST /ai/models: repo and optional metadata.
type AIModelCreate struct {
	Repo        string  `json:"repo" minLength:"3" maxLength:"96" pattern:"^[A-Za-z0-9](\\.?[A-Za-z0-9_-])*\\.?/[A-Za-z0-9](\\.?[A-Za-z0-9_-])*\\.?$" patternDescription:"org/name; each part starts with a letter or digit and holds only letters, digits, '.', '_', '-', no '..'" doc:"Unique; frozen"`
	DisplayName *string `json:"display_name,omitempty" nullable:"true" minLength:"1" maxLength:"255" doc:"Default: the last part of repo"`
	Gated       *bool   `json:"gated,omitempty" nullable:"true" doc:"Default false"`
	AIModelMetadata
}

// AIModelPatch is the merge-patch body of PATCH /ai/models/{id}.
type AIModelPatch struct {
	Repo          Optional[string]          `json:"repo,omitzero" maxLength:"96" doc:"Frozen: only its current value"`
	DisplayName   Optional[string]          `json:"display_name,omitzero" minLength:"1" maxLength:"255"`
	Gated         Optional[bool]            `json:"gated,omitzero"`
	Status        Optional[string]          `json:"status,omitzero" doc:"Read-only: only its current value"`
	Location      Nullable[string]          `json:"location,omitzero" doc:"Read-only: only its current value"`
	OfflineReady  Optional[bool]            `json:"offline_ready,omitzero" doc:"Read-only: only its current value"`
	NASVolume     Nullable[string]          `json:"nas_volume,omitzero" doc:"Read-only: only its current value"`
	Architecture  Nullable[string]          `json:"architecture,omitzero" maxLength:"40"`
	Benchmarks    Nullable[BenchmarksPatch] `json:"benchmarks,omitzero"`
	Category      Nullable[string]          `json:"category,omitzero" maxLength:"24"`
	ContextWindow Nullable[string]          `json:"context_window,omitzero" maxLength:"20"`
	Description   Nullable[string]          `json:"description,omitzero" maxLength:"20000"`
	FrontierEquiv Nullable[string]          `json:"frontier_equiv,omitzero" maxLength:"120"`
	GatewayTier   Nullable[string]          `json:"gateway_tier,omitzero" maxLength:"40"`
	License       Nullable[string]          `json:"license,omitzero" maxLength:"80"`
	MinTarget     Nullable[string]          `json:"min_target,omitzero" maxLength:"40"`
	ModelCardURL  Nullable[string]          `json:"model_card_url,omitzero" maxLength:"300"`
	Notes         Nullable[string]          `json:"notes,omitzero" maxLength:"20000"`
	Org           Nullable[string]          `json:"org,omitzero" maxLength:"120"`
	ParamCountB   Nullable[float64]         `json:"param_count_b,omitzero" minimum:"0" maximum:"9999999"`
	Params        Nullable[string]          `json:"params,omitzero" maxLength:"60"`
	Published     Nullable[string]          `json:"published,omitzero" maxLength:"20"`
	Quant         Nullable[string]          `json:"quant,omitzero" maxLength:"40"`
	ServingNode   Nullable[string]          `json:"serving_node,omitzero" maxLength:"80"`
	SizeGB        Nullable[float64]         `json:"size_gb,omitzero" minimum:"0" maximum:"99999999"`
	StrongAxis    Nullable[string]          `json:"strong_axis,omitzero" maxLength:"40"`
	Summary       Nullable[string]          `json:"summary,omitzero" maxLength:"2000"`
	Vendor        Nullable[string]          `json:"vendor,omitzero" maxLength:"200"`
	VendorCountry Nullable[string]          `json:"vendor_country,omitzero" maxLength:"40"`
}

func (p AIModelPatch) domain() resources.AIModelPatch {
	return resources.AIModelPatch{Repo: p.Repo.Patch(), DisplayName: p.DisplayName.Patch(), Status: p.Status.Patch(),
		Gated: p.Gated.Patch(), OfflineReady: p.OfflineReady.Patch(), Location: p.Location.Patch(),
		NASVolume: p.NASVolume.Patch(), Meta: resources.AIModelMetaPatch{
			Architecture: p.Architecture.Patch(), Category: p.Category.Patch(), ContextWindow: p.ContextWindow.Patch(),
			Description: p.Description.Patch(), FrontierEquiv: p.FrontierEquiv.Patch(), GatewayTier: p.GatewayTier.Patch(),
			License: p.License.Patch(), MinTarget: p.MinTarget.Patch(), ModelCardURL: p.ModelCardURL.Patch(),
			Notes: p.Notes.Patch(), Org: p.Org.Patch(), Params: p.Params.Patch(), Published: p.Published.Patch(),
			Quant: p.Quant.Patch(), ServingNode: p.ServingNode.Patch(), StrongAxis: p.StrongAxis.Patch(),
			Summary: p.Summary.Patch(), Vendor: p.Vendor.Patch(), VendorCountry: p.VendorCountry.Patch(),
			ParamCountB: p.ParamCountB.Patch(), SizeGB: p.SizeGB.Patch(), Benchmarks: benchmarksDomain(p.Benchmarks.Patch())}}
}

func (b AIModelCreate) domain() (resources.AIModel, error) {
	return resources.NewAIModel(resources.AIModelCreate{Repo: b.Repo, DisplayName: b.DisplayName, Gated: b.Gated,
		AIModelMeta: resources.AIModelMeta(b.AIModelMetadata)})
}

func aiModelView(m resources.AIModel) AIModel {
	caches := make([]NodeCacheRef, 0, len(m.NodeCaches))
	for _, c := range m.NodeCaches {
		caches = append(caches, NodeCacheRef{Hostname: c.Hostname, Status: c.Status, SizeGB: c.SizeGB, Path: c.Path,
			UpdatedAt: c.UpdatedAt.UTC()})
	}
	return AIModel{ID: formatID(m.ID), Repo: m.Repo, DisplayName: m.DisplayName, Gated: m.Gated, Status: m.Status,
		Location: m.Location, OfflineReady: m.OfflineReady, NASVolume: m.NASVolume, NASPath: m.NASPath,
		ClusterRecipe: m.ClusterRecipe, NodeCaches: caches, CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC(),
		AIModelMetadata: AIModelMetadata(m.AIModelMeta)}
}

// benchmarksSchema is the schema of resources.Benchmarks: an object of at
// most 100 members, each a number or a string.
type benchmarksSchema struct{}

// Schema implements huma.SchemaProvider.
func (benchmarksSchema) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, MaxProperties: ptr(resources.MaxBenchmarks),
		AdditionalProperties: &huma.Schema{AnyOf: []*huma.Schema{{Type: huma.TypeNumber}, {Type: huma.TypeString}}}}
}

// BenchmarksPatch is the merge patch of a model's benchmarks (RFC 7396): a
// member with a number or string sets that score, null removes it, members
// not sent stay. The merged result holds at most 100 members.
type BenchmarksPatch map[string]any

// Schema implements huma.SchemaProvider.
func (BenchmarksPatch) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, MaxProperties: ptr(2 * resources.MaxBenchmarks),
		Description: "Merged into the stored benchmarks: a number or string sets a score, null removes it; " +
			"at most 100 members after the merge",
		AdditionalProperties: &huma.Schema{AnyOf: []*huma.Schema{{Type: huma.TypeNumber}, {Type: huma.TypeString},
			{Type: "null"}}}}
}

// benchmarksDomain converts the patch member for resources.AIModel.Apply.
func benchmarksDomain(p resources.Patch[BenchmarksPatch]) resources.Patch[resources.Benchmarks] {
	return resources.Patch[resources.Benchmarks]{Set: p.Set, Null: p.Null, Value: resources.Benchmarks(p.Value)}
}

// Inputs and outputs of the AI model operations.
type (
	AIModelIDInput struct {
		ModelID string `path:"model_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Catalogue id"`
	}
	CreateAIModelInput struct {
		Body AIModelCreate
	}
	PatchAIModelInput struct {
		AIModelIDInput
		Body AIModelPatch `contentType:"application/merge-patch+json"`
	}
	AIModelOutput struct {
		Body AIModel
	}
	AIModelCreatedOutput struct {
		Location string `header:"Location" doc:"/api/v1/ai/models/{id}"`
		Body     AIModel
	}
)

var (
	aiModelReaders = []string{resources.PermAIRead, resources.PermAIWrite}
	aiModelWriters = []string{resources.PermAIWrite}
)

func (s *Server) registerAIModels() {
	s.api.OpenAPI().Components.Schemas.RegisterTypeAlias(reflect.TypeFor[resources.Benchmarks](), reflect.TypeFor[benchmarksSchema]())
	tags := []string{"AI"}
	s.registerAIModelList(tags)
	Register(s.api, Op{ID: "create-ai-model", Toolset: ToolsetAI, Method: http.MethodPost, Path: "/ai/models", Tags: tags, Status: http.StatusCreated,
		Feature: resources.FeatureAI,
		Summary: "Add a model to the catalogue", Permissions: aiModelWriters, Idempotent: true,
		Errors: []int{http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Adds a planned row (no central copy, no node cache; weights arrive only through store actions outside " +
			"the API). display_name defaults to the last part of repo. status, location, offline_ready, nas_volume, nas_path " +
			"and cluster_recipe are not accepted. 409 ai_model_repo_taken.",
		Notes: "201; `Idempotency-Key`; `repo` required (`org/name`, ≤ 96, unique: 409 " +
			"`ai_model_repo_taken`); starts `planned`",
	}, s.createAIModel)
	Register(s.api, Op{ID: "get-ai-model", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/ai/models/{model_id}", Tags: tags,
		Summary: "Read an AI model", Permissions: aiModelReaders, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One catalogue row with its node caches (404 ai_model_not_found).",
		Notes:       "404 `ai_model_not_found`; `node_caches` from the node caches",
	}, s.getAIModel)
	Register(s.api, Op{ID: "patch-ai-model", Toolset: ToolsetAI, Method: http.MethodPatch, Path: "/ai/models/{model_id}", Tags: tags,
		Feature: resources.FeatureAI,
		Summary: "Change catalogue metadata (JSON Merge Patch)", Permissions: aiModelWriters,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Only the members sent change; null clears any metadata member but display_name and gated. repo is " +
			"frozen (422 immutable_field); status, location, offline_ready and nas_volume are read-only (their current value " +
			"is accepted, another is 422 read_only_field); nas_path and cluster_recipe are not accepted.",
		Notes: "merge patch; `repo` frozen; `status`, `location`, `offline_ready`, " +
			"`nas_volume` read-only (422 `read_only_field`)",
	}, s.patchAIModel)
	Register(s.api, Op{ID: "delete-ai-model", Toolset: ToolsetAI, Method: http.MethodDelete, Path: "/ai/models/{model_id}", Tags: tags,
		Feature: resources.FeatureAI,
		Summary: "Remove a planned model from the catalogue", Permissions: aiModelWriters, Destroy: true, Status: http.StatusNoContent,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Only a planned row without node caches; any other is 409 ai_model_has_weights " +
			"(blockers: node_caches, and central_copy 1 unless the model is planned).",
		Notes: "only a `planned` model with no cache (409 `ai_model_has_weights`)",
	}, func(ctx context.Context, in *AIModelIDInput) (*struct{}, error) {
		return nil, s.svc.AIModels.DeleteAIModel(ctx, ActorFrom(ctx), parseID(in.ModelID))
	})
}

func (s *Server) getAIModel(ctx context.Context, in *AIModelIDInput) (*AIModelOutput, error) {
	m, err := s.svc.AIModels.GetAIModel(ctx, parseID(in.ModelID))
	if err != nil {
		return nil, err
	}
	return &AIModelOutput{Body: aiModelView(*m)}, nil
}

func (s *Server) createAIModel(ctx context.Context, in *CreateAIModelInput) (*AIModelCreatedOutput, error) {
	m, err := in.Body.domain()
	if err != nil {
		return nil, err
	}
	keepAnswerInTx(ctx, http.StatusCreated, func(m resources.AIModel) (string, any) {
		out := aiModelCreated(m)
		return out.Location, out.Body
	})
	created, err := s.svc.AIModels.CreateAIModel(ctx, ActorFrom(ctx), m, LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return aiModelCreated(created), nil
}

// aiModelCreated is the answer to a create: its view and its Location.
func aiModelCreated(m resources.AIModel) *AIModelCreatedOutput {
	return &AIModelCreatedOutput{Location: Prefix + "/ai/models/" + formatID(m.ID), Body: aiModelView(m)}
}

func (s *Server) patchAIModel(ctx context.Context, in *PatchAIModelInput) (*AIModelOutput, error) {
	m, err := s.svc.AIModels.PatchAIModel(ctx, ActorFrom(ctx), parseID(in.ModelID), in.Body.domain())
	if err != nil {
		return nil, err
	}
	return &AIModelOutput{Body: aiModelView(m)}, nil
}

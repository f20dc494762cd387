package api

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// boolFilter is an optional boolean query parameter: IsSet tells an absent
// parameter from false.
type boolFilter struct {
	Value bool
	IsSet bool
}

// Schema is a boolean's: the parameter is parsed into Value.
func (boolFilter) Schema(r huma.Registry) *huma.Schema {
	return huma.SchemaFromType(r, reflect.TypeFor[bool]())
}

// Receiver implements huma.ParamWrapper.
func (b *boolFilter) Receiver() reflect.Value { return reflect.ValueOf(b).Elem().Field(0) }

// OnParamSet implements huma.ParamReactor.
func (b *boolFilter) OnParamSet(isSet bool, _ any) { b.IsSet = isSet }

func (b boolFilter) ptr() *bool {
	if !b.IsSet {
		return nil
	}
	return &b.Value
}

// ListAIModelsInput is the query of GET /ai/models.
type ListAIModelsInput struct {
	ListParams
	Status      string     `query:"status" maxLength:"40" doc:"Statuses, any of them, comma-separated: planned, pulling, owned, serving, …"`
	Category    string     `query:"category" maxLength:"24" doc:"Exact category"`
	Vendor      string     `query:"vendor" maxLength:"200" doc:"Exact vendor"`
	Org         string     `query:"org" maxLength:"120" doc:"Exact model-hub organisation"`
	GatewayTier string     `query:"gateway_tier" maxLength:"40" doc:"Exact AI gateway serving tier"`
	ServingNode string     `query:"serving_node" maxLength:"80" doc:"Exact serving node or GPU cluster"`
	Gated       boolFilter `query:"gated" doc:"Only gated (true) or only open (false) repos"`
	Q           string     `query:"q" maxLength:"200" doc:"Case-insensitive substring of repo, display_name or summary"`
	Cached      []string   `query:"cached" enum:"ready,none" doc:"ready: a node cache of it is ready; none: no node holds a ready one"`
	Sort        string     `query:"sort" enum:"id,param_count_b,size_gb" default:"id" doc:"Sort key; ties in id order"`
	Order       string     `query:"order" enum:"asc,desc" default:"asc" doc:"Sort direction; rows without the sort value come last either way"`
}

// filter is the query as the store reads it. The statuses arrive in one
// string (the parameter is a string in the published contract) and are
// read as the other lists' multi-value filters are: a list of any of them,
// which the cursor binds as a set.
func (in ListAIModelsInput) filter() resources.AIModelFilter {
	var statuses []string
	if in.Status != "" {
		statuses = strings.Split(in.Status, ",")
	}
	return resources.AIModelFilter{Status: statuses, Category: in.Category, Vendor: in.Vendor, Org: in.Org,
		GatewayTier: in.GatewayTier, ServingNode: in.ServingNode, Gated: in.Gated.ptr(), Q: in.Q,
		Cached: in.Cached, Sort: in.Sort, Order: in.Order}
}

func (s *Server) registerAIModelList(tags []string) {
	Register(s.api, Op{ID: "list-ai-models", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/ai/models", Tags: tags,
		Summary: "List the AI model catalogue", Permissions: aiModelReaders, Errors: []int{http.StatusBadRequest},
		Description: "Catalogue rows with their node caches. Filters are exact and combine (status takes " +
			"several, comma-separated); q searches repo, display_name and summary. sort=param_count_b|size_gb: " +
			"by that value (rows without it last), then id.",
		Notes: "filters `status`, `category`, `vendor`, `org`, `gateway_tier`, `serving_node`, " +
			"`gated`, `cached` (`ready`, `none`); `q` substring of repo, display name, summary; `sort` `id`, " +
			"`param_count_b`, `size_gb` with `order`",
	}, s.listAIModels)
}

func (s *Server) listAIModels(ctx context.Context, in *ListAIModelsInput) (*ListOutput[AIModel], error) {
	f := in.filter()
	if slices.Contains(f.Status, "") {
		return nil, &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter, Field: "status",
			Detail: "status: an item is empty; give the statuses comma-separated, e.g. planned,owned"}
	}
	return listPage(ctx, s, "ai-models", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.AIModel], error) {
		return s.svc.AIModels.ListAIModels(ctx, f, q)
	}, aiModelView)
}

package api

import (
	"iter"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// DocOperation is one operation of an OpenAPI document, with the method and
// path it is served at.
type DocOperation struct {
	Method, Path string
	*huma.Operation
}

// Operations yields every operation of oapi with its method and path, in no
// set order: the one walk over a document's path items.
func Operations(oapi *huma.OpenAPI) iter.Seq[DocOperation] {
	return func(yield func(DocOperation) bool) {
		for path, item := range oapi.Paths {
			for method, op := range methodsOf(item) {
				if op != nil && !yield(DocOperation{method, path, op}) {
					return
				}
			}
		}
	}
}

// operationAt is the operation of oapi at method and path, or nil.
func operationAt(oapi *huma.OpenAPI, method, path string) *huma.Operation {
	item := oapi.Paths[path]
	if item == nil {
		return nil
	}
	return methodsOf(item)[method]
}

// methodsOf is each method's operation of item, nil where it has none.
func methodsOf(item *huma.PathItem) map[string]*huma.Operation {
	return map[string]*huma.Operation{
		http.MethodGet: item.Get, http.MethodPut: item.Put, http.MethodPost: item.Post,
		http.MethodDelete: item.Delete, http.MethodOptions: item.Options,
		http.MethodHead: item.Head, http.MethodPatch: item.Patch, http.MethodTrace: item.Trace,
	}
}

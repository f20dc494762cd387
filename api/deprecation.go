package api

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// MinDeprecationNotice is the least time between announcing a removal and
// the removal (contract, Versioning: 12 months).
const MinDeprecationNotice = 365 * 24 * time.Hour

// Deprecation marks an operation deprecated (contract: Versioning). It is
// `deprecated: true` in the OpenAPI document, and every answer of the
// operation carries the Deprecation header (RFC 9745) and the Sunset header
// (RFC 8594), plus Link rel="deprecation" when a changelog entry is given.
type Deprecation struct {
	Since  time.Time // when it was announced: Deprecation: @<unix seconds>
	Sunset time.Time // when it stops working, at least MinDeprecationNotice after Since
	Link   string    // the changelog entry announcing it (optional)
}

// check refuses a declaration the contract does not allow: a missing date
// or less than 12 months' notice. It runs at registration (a wiring mistake).
func (d *Deprecation) check(id string) {
	if d.Since.IsZero() || d.Sunset.IsZero() || d.Sunset.Sub(d.Since) < MinDeprecationNotice {
		panic(fmt.Sprintf("api: operation %s: a deprecation needs Since and a Sunset at least 12 months later", id))
	}
}

// describe is the sentence the operation's description ends with.
func (d *Deprecation) describe() string {
	s := "Deprecated since " + d.Since.UTC().Format(time.DateOnly) + "; removed after " +
		d.Sunset.UTC().Format(time.DateOnly) + " (headers Deprecation and Sunset)."
	if d.Link != "" {
		s += " See " + d.Link + "."
	}
	return s
}

// headers sets the deprecation headers of one answer.
func (d *Deprecation) headers(set func(name, value string)) {
	set("Deprecation", "@"+strconv.FormatInt(d.Since.Unix(), 10))
	set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
	if d.Link != "" {
		set("Link", "<"+d.Link+`>; rel="deprecation"; type="text/html"`)
	}
}

// deprecation sends the headers of a deprecated operation with every answer
// it gives, errors included.
func (s *Server) deprecation(ctx huma.Context, next func(huma.Context)) {
	if op, _ := opOf(ctx.Operation()); op.Deprecated != nil {
		op.Deprecated.headers(ctx.SetHeader)
	}
	next(ctx)
}

// markDeprecatedParams sets `deprecated: true` on the OpenAPI entry of every
// path, query or header parameter of I whose field is tagged
// `deprecated:"true"` (Huma reads that tag for body members only).
func markDeprecatedParams[I any](api huma.API, op Op) {
	names := deprecatedParams(reflect.TypeFor[I](), nil)
	if len(names) == 0 {
		return
	}
	hop := operationAt(api.OpenAPI(), op.Method, op.Path)
	if hop == nil {
		return
	}
	for _, p := range hop.Parameters {
		if names[p.In+":"+p.Name] {
			p.Deprecated = true
		}
	}
}

// deprecatedParams collects "in:name" of the deprecated parameters of t,
// embedded structs included.
func deprecatedParams(t reflect.Type, into map[string]bool) map[string]bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return into
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			into = deprecatedParams(f.Type, into)
			continue
		}
		if f.Tag.Get("deprecated") != "true" {
			continue
		}
		for _, in := range []string{"path", "query", "header"} {
			if name, _, _ := strings.Cut(f.Tag.Get(in), ","); name != "" {
				if into == nil {
					into = map[string]bool{}
				}
				into[in+":"+name] = true
			}
		}
	}
	return into
}

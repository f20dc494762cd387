package api

import (
	"context"
	"encoding/json"
	"strconv"

	"platformapi/resources"
)

// FieldsParam is the member selection every list takes.
type FieldsParam struct {
	Fields string `query:"fields" maxLength:"1000" doc:"Members to return, comma-separated (default: all)."`
}

// ListParams are the paging parameters of every list but the audit log.
type ListParams struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size."`
	Cursor string `query:"cursor" maxLength:"2048" doc:"next_cursor of the previous page."`
	FieldsParam
}

// page returns the paging arguments of a list.
func (p ListParams) page() pageArgs {
	return pageArgs{Limit: p.Limit, Cursor: p.Cursor, Fields: p.Fields}
}

// pageArgs are what listPage needs from a list's input.
type pageArgs struct {
	Limit  int
	Cursor string
	Fields string
	// Reserve is the bytes a page's own members besides items, next_cursor
	// and monitoring_reachable take (e.g. a summary): held back from the
	// MCP result budget.
	Reserve int
}

// ListBody is the body of every list: a page of items and the cursor of the
// next page, null at the end.
type ListBody[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor" nullable:"true" doc:"Send back as cursor for the next page; null at the end."`

	encoded []json.RawMessage // the items as sent (fields applied); nil: Items
}

// MarshalJSON writes the page with its items as encoded by listPage (with
// the member selection applied), else as they are.
func (b ListBody[T]) MarshalJSON() ([]byte, error) {
	return marshalPage(b.encoded, b.Items, nil, b.NextCursor)
}

// ListOutput wraps a list body for Huma.
type ListOutput[T any] struct {
	Body ListBody[T]
}

// listPage runs one keyset page of a list: decodes the cursor (bound to the
// list and its filters), fetches, converts, applies the member selection
// (fields) and the result budget of an MCP call, and issues the next cursor.
// A page cut by the budget ends with its last item's cursor, so the next page
// continues exactly after it.
func listPage[T, W any](ctx context.Context, s *Server, list string, filters any, in pageArgs,
	fetch func(resources.PageQuery) (resources.Page[T], error), conv func(T) W) (*ListOutput[W], error) {
	sel, err := selectFields[W](in.Fields)
	if err != nil {
		return nil, err
	}
	after, err := s.cursors.Decode(list, filters, in.Cursor)
	if err != nil {
		return nil, err
	}
	pg, err := fetch(resources.PageQuery{Limit: in.Limit, After: after})
	if err != nil {
		return nil, err
	}
	out := &ListOutput[W]{Body: ListBody[W]{Items: make([]W, 0, len(pg.Items))}}
	for _, it := range pg.Items {
		out.Body.Items = append(out.Body.Items, conv(it))
	}
	enc, err := encodeItems(out.Body.Items, sel)
	if err != nil {
		return nil, err
	}
	next := pg.Next
	if n, cut := fitBudget(enc, ResultBudget(ctx), in.Reserve); cut {
		if n == 0 {
			return nil, firstItemTooLarge(enc[0], ResultBudget(ctx), in.Reserve)
		}
		enc, out.Body.Items, next = enc[:n], out.Body.Items[:n], pg.Keys[n-1]
	}
	out.Body.encoded = enc
	out.Body.NextCursor = s.cursors.Encode(list, filters, next)
	return out, nil
}

// staticList answers a list that is never paged (next_cursor always null)
// with the member selection and the MCP result budget applied like listPage.
func staticList[W any](ctx context.Context, items []W, fields string) (*ListOutput[W], error) {
	sel, err := selectFields[W](fields)
	if err != nil {
		return nil, err
	}
	enc, err := encodeItems(items, sel)
	if err != nil {
		return nil, err
	}
	if n, cut := fitBudget(enc, ResultBudget(ctx), 0); cut {
		return nil, listTooLarge(n, len(enc), ResultBudget(ctx))
	}
	return &ListOutput[W]{Body: ListBody[W]{Items: items, encoded: enc}}, nil
}

// formatID spells a numeric id as the API does: a decimal string.
func formatID(id int64) string { return strconv.FormatInt(id, 10) }

// formatIDPtr spells an optional numeric id.
func formatIDPtr(id *int64) *string {
	if id == nil {
		return nil
	}
	s := formatID(*id)
	return &s
}

// parseID reads a path id already checked against idPattern.
func parseID(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

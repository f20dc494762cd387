package api

import (
	"strconv"

	"platformapi/resources"
)

// ListParams are the paging parameters of every list but the audit log.
type ListParams struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Page size, 1 to 200."`
	Cursor string `query:"cursor" maxLength:"2048" doc:"The next_cursor of the previous page; opaque."`
}

// ListBody is the body of every list: a page of items and the cursor of the
// next page, null at the end.
type ListBody[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor" nullable:"true" doc:"Send back as cursor for the next page; null at the end."`
}

// ListOutput wraps a list body for Huma.
type ListOutput[T any] struct {
	Body ListBody[T]
}

// listPage runs one keyset page of a list: decodes the cursor (bound to the
// list and its filters), fetches, converts and issues the next cursor.
func listPage[T, W any](s *Server, list string, filters any, limit int, cursor string,
	fetch func(resources.PageQuery) (resources.Page[T], error), conv func(T) W) (*ListOutput[W], error) {
	after, err := s.cursors.Decode(list, filters, cursor)
	if err != nil {
		return nil, err
	}
	pg, err := fetch(resources.PageQuery{Limit: limit, After: after})
	if err != nil {
		return nil, err
	}
	out := &ListOutput[W]{Body: ListBody[W]{Items: make([]W, 0, len(pg.Items))}}
	for _, it := range pg.Items {
		out.Body.Items = append(out.Body.Items, conv(it))
	}
	out.Body.NextCursor = s.cursors.Encode(list, filters, pg.Next)
	return out, nil
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

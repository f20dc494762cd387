package resources

// Page size bounds shared by every list.
const (
	DefaultPageLimit  = 50
	MaxPageLimit      = 200
	MaxAuditPageLimit = 500
)

// PageQuery asks for one keyset page: at most Limit rows after the row whose
// sort key is After (nil: from the start). The key's parts are the list's
// sort columns, spelled as strings.
type PageQuery struct {
	Limit int
	After []string
}

// Page is one page of a list: its items, the sort key of each item (Keys[i]
// is Items[i]'s, so a page can be cut short and continued exactly after any
// item) and the sort key of the last item when more rows follow (nil at the
// end).
type Page[T any] struct {
	Items []T
	Keys  [][]string
	Next  []string
}

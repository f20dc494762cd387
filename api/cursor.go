package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"

	"platformapi/resources"
)

const cursorMACLen = 16

// Cursors issues and checks list cursors: opaque, authenticated (HMAC) and
// bound to the list and its filters, so a cursor is good only for the list
// and filters it was issued for.
type Cursors struct{ key []byte }

// NewCursors builds the codec under a server key shared by every replica.
func NewCursors(key []byte) Cursors { return Cursors{key: key} }

type cursorPayload struct {
	List    string   `json:"l"`
	Filters string   `json:"f"`
	After   []string `json:"a"`
}

// Encode returns the cursor that continues list after the given sort key, or
// nil when after is nil (the end of the list).
func (c Cursors) Encode(list string, filters any, after []string) *string {
	if after == nil {
		return nil
	}
	raw, _ := json.Marshal(cursorPayload{List: list, Filters: filterDigest(filters), After: after})
	mac := c.mac(raw)
	s := base64.RawURLEncoding.EncodeToString(append(raw, mac...))
	return &s
}

// Decode returns the sort key a cursor continues after; "" is the start. A
// cursor not issued for this list and these filters is 400 invalid_cursor.
func (c Cursors) Decode(list string, filters any, cursor string) ([]string, error) {
	if cursor == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) <= cursorMACLen {
		return nil, invalidCursor()
	}
	raw, mac := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	if !hmac.Equal(mac, c.mac(raw)) {
		return nil, invalidCursor()
	}
	var p cursorPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.List != list || p.Filters != filterDigest(filters) || len(p.After) == 0 {
		return nil, invalidCursor()
	}
	return p.After, nil
}

func (c Cursors) mac(raw []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(raw)
	return m.Sum(nil)[:cursorMACLen]
}

// filterDigest digests the filters a cursor is bound to. A multi-value
// filter is a set: its values count sorted, each once, so the same filters
// asked in another order continue the list.
func filterDigest(filters any) string {
	if v := reflect.ValueOf(filters); v.Kind() == reflect.Struct {
		filters = sortedSets(v).Interface()
	}
	raw, _ := json.Marshal(filters)
	sum := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// sortedSets returns a copy of the struct v with the values of every
// exported []string member, in v and in the structs it holds, sorted and
// each once.
func sortedSets(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	for i := range c.NumField() {
		f := c.Field(i)
		switch {
		case !f.CanSet():
		case f.Kind() == reflect.Struct:
			f.Set(sortedSets(f))
		case f.Type() == reflect.TypeFor[[]string]() && f.Len() > 1:
			f.Set(reflect.ValueOf(slices.Compact(slices.Sorted(slices.Values(f.Interface().([]string))))))
		}
	}
	return c
}

func invalidCursor() error {
	return &resources.Error{Kind: resources.KindBadRequest, Code: resources.CodeInvalidCursor, Field: "cursor",
		Detail: "the cursor was not issued for this list and these filters; start again without one"}
}

package tools

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"platformapi/api"
)

// answerBuffer is a reusable buffer with the encoder that writes into it.
type answerBuffer struct {
	b   bytes.Buffer
	enc *json.Encoder
}

// maxKeptAnswer bounds the buffers kept for reuse: a larger one (a rare
// answer near the 25,000-token budget, its text escaped) is left to the
// garbage collector.
const maxKeptAnswer = 512 << 10

// newAnswerBuffer is the New of MCP.answers.
func newAnswerBuffer() any {
	a := &answerBuffer{}
	a.enc = json.NewEncoder(&a.b)
	return a
}

// release empties a and returns it to m.answers unless it grew past
// maxKeptAnswer.
func (m *MCP) release(a *answerBuffer) {
	if a.b.Cap() > maxKeptAnswer {
		return
	}
	a.b.Reset()
	m.answers.Put(a)
}

// appendCallResult appends exactly what json.NewEncoder(w).Encode(resp)
// writes (mcp-go's encoding of a tool's answer, HTML escaping included)
// when resp has the shape of every successful answer of a tool here: a
// CallToolResult with text contents, the rate budget in _meta and,
// optionally, raw structured content, nothing else (a tool error's
// structured content is a decoded problem document, encoded by the standard
// encoder). It reports false, having appended something partial, for any
// other shape.
//
// The raw structured content is an answer of the API's own router, which
// encodes compact JSON (api.JSONFormat); it is HTML-escaped as the
// standard encoder would, not scanned again.
func (a *answerBuffer) appendCallResult(resp mcp.JSONRPCMessage) bool {
	r, ok := resp.(mcp.JSONRPCResponse)
	if !ok {
		return false
	}
	res, ok := r.Result.(*mcp.CallToolResult)
	if !ok || !plainResult(res) {
		return false
	}
	a.b.WriteString(`{"jsonrpc":`)
	if a.value(r.JSONRPC) != nil {
		return false
	}
	a.b.WriteString(`,"id":`)
	if a.value(r.ID.Value()) != nil { // what RequestId.MarshalJSON writes
		return false
	}
	a.b.WriteString(`,"result":{`)
	if rate, ok := rateMeta(res.Meta); ok { // "_meta" sorts first, as encoding/json orders map keys
		a.b.WriteString(`"_meta":{"` + RateMetaKey + `":{"limit":`)
		a.b.WriteString(strconv.Itoa(rate.Limit))
		a.b.WriteString(`,"remaining":`)
		a.b.WriteString(strconv.Itoa(rate.Remaining))
		a.b.WriteString(`,"reset_seconds":`)
		a.b.WriteString(strconv.Itoa(rate.ResetSeconds))
		a.b.WriteString(`}},`)
	}
	a.appendTextContents(res.Content)
	if res.IsError {
		a.b.WriteString(`,"isError":true`)
	}
	if raw := bytes.TrimSpace(res.RawStructuredContent); len(raw) > 0 {
		a.b.WriteString(`,"structuredContent":`)
		json.HTMLEscape(&a.b, raw)
	}
	a.b.WriteString("}}\n")
	return true
}

// appendTextContents appends the "content" member of text contents (as
// plainResult checked them) as encoding/json writes it.
func (a *answerBuffer) appendTextContents(contents []mcp.Content) {
	a.b.WriteString(`"content":[`)
	for i, c := range contents {
		t := c.(mcp.TextContent)
		if i > 0 {
			a.b.WriteByte(',')
		}
		a.b.WriteString(`{"type":`)
		_ = a.value(t.Type)
		a.b.WriteString(`,"text":`)
		_ = a.value(t.Text)
		a.b.WriteByte('}')
	}
	a.b.WriteByte(']')
}

// value appends v as encoding/json encodes it.
func (a *answerBuffer) value(v any) error {
	if err := a.enc.Encode(v); err != nil {
		return err
	}
	a.b.Truncate(a.b.Len() - 1) // Encode's newline
	return nil
}

// plainResult reports whether res has only what appendCallResult writes:
// text contents without annotations or _meta, raw structured content or
// none, no _meta but the rate budget, no result type or multi round-trip
// fields.
func plainResult(res *mcp.CallToolResult) bool {
	if res == nil || res.ResultType != "" || len(res.InputRequests) > 0 ||
		res.RequestState != "" || res.StructuredContent != nil && len(res.RawStructuredContent) == 0 {
		return false
	}
	if _, ok := rateMeta(res.Meta); res.Meta != nil && !ok {
		return false
	}
	for _, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok || t.Annotations != nil || t.Meta != nil {
			return false
		}
	}
	return true
}

// rateMeta is the rate budget in meta when that is all meta holds.
func rateMeta(meta *mcp.Meta) (api.RateStatus, bool) {
	if meta == nil || meta.ProgressToken != nil || len(meta.AdditionalFields) != 1 {
		return api.RateStatus{}, false
	}
	rate, ok := meta.AdditionalFields[RateMetaKey].(api.RateStatus)
	return rate, ok
}

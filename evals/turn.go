package evals

import (
	"context"
	"fmt"
	"maps"
	"strings"
)

// turn plays one turn: the scripted calls, or the agent. A returned error
// ends the run (the session broke); failed expectations are reasons.
func (r *run) turn(ctx context.Context, i int, t Turn) error {
	token := r.token
	if t.Token != "" {
		var err error
		if token, err = r.vars.text(t.Token); err != nil {
			return err
		}
	}
	s, err := r.session(ctx, token)
	if err != nil {
		return err
	}
	if r.opts.Agent == nil {
		return r.scripted(ctx, i, s, t)
	}
	return r.agentTurn(ctx, i, s, t)
}

// callAt is where a scripted call is: its label in reasons and its
// position in the suite file (turns, i, calls, j) for their lines.
type callAt struct {
	label string
	loc   []any
}

// line is the file's line of the call's member under sub (the call's
// own line when sub is absent from the file).
func (r *run) line(at callAt, sub ...any) int {
	return r.file.line(append(at.loc[:len(at.loc):len(at.loc)], sub...)...)
}

// scripted plays the turn's calls and checks each result.
func (r *run) scripted(ctx context.Context, i int, s *session, t Turn) error {
	for j, c := range t.Calls {
		at := callAt{label: fmt.Sprintf("turns[%d].calls[%d] %s", i, j, c.Tool),
			loc: []any{"turns", i, "calls", j}}
		var err error
		if c.ForEach != nil {
			err = r.forEach(ctx, s, at, c)
		} else {
			err = r.playCall(ctx, s, at, c, r.vars)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// playCall renders the call's args with vs, makes the call, checks the
// result and captures from it; failures are reasons labelled at, each
// with the line of the expectation or capture that failed.
func (r *run) playCall(ctx context.Context, s *session, at callAt, c Call, vs vars) error {
	args, err := vs.value(anyMap(c.Args))
	if err != nil {
		return &atLine{r.line(at, "args"), fmt.Errorf("%s: %w", at.label, err)}
	}
	res, err := r.call(ctx, s, c.Tool, args.(map[string]any))
	if err != nil {
		return &atLine{r.line(at), err}
	}
	for _, f := range r.expect(ctx, s, at, c, res) {
		r.failAt(f.line, "%s: %s", at.label, f.text)
	}
	for _, name := range sortedKeys(c.Capture) {
		for _, f := range r.vars.capture(map[string]string{name: c.Capture[name]}, res.Doc) {
			r.failAt(r.line(at, "capture", name), "%s: %s", at.label, f)
		}
	}
	return nil
}

// forEach plays the call once per element of its list, the element bound
// to its name; each failure names the element (as[index] = value). A
// value that is not a list, or one longer than MaxForEach, fails the call
// without making it; an empty list makes no call.
func (r *run) forEach(ctx context.Context, s *session, at callAt, c Call) error {
	ref, _ := onlyTemplate(c.ForEach.In)
	val, err := r.vars.lookup(ref)
	if err != nil {
		return &atLine{r.line(at, "for_each"), fmt.Errorf("%s: for_each: %w", at.label, err)}
	}
	list, ok := val.([]any)
	line := r.line(at, "for_each")
	switch {
	case !ok:
		r.failAt(line, "%s: for_each: {{%s}} is %s, not a list", at.label, ref, brief(val))
		return nil
	case len(list) > MaxForEach:
		r.failAt(line, "%s: for_each: {{%s}} holds %d elements, more than %d", at.label, ref,
			len(list), MaxForEach)
		return nil
	}
	for k, e := range list {
		vs := maps.Clone(r.vars)
		vs[c.ForEach.As] = e
		label := fmt.Sprintf("%s, %s[%d] = %s", at.label, c.ForEach.As, k, cut(brief(e), 80))
		if err := r.playCall(ctx, s, callAt{label, at.loc}, c, vs); err != nil {
			return err
		}
	}
	return nil
}

// call runs one tool call and records it.
func (r *run) call(ctx context.Context, s *session, tool string, args map[string]any) (CallResult, error) {
	res, err := s.call(ctx, tool, args)
	if err != nil {
		return res, err
	}
	r.res.Calls++
	r.res.TokensRead += res.Tokens
	r.res.Tools = append(r.res.Tools, CallSummary{Tool: tool, IsError: res.IsError, Tokens: res.Tokens})
	return res, nil
}

// failure is one failed expectation and the suite file's line of it.
type failure struct {
	line int
	text string
}

// expect checks one result against the call's expectations; each failure
// has the line of its member (expect.code, expect.json[k], …), else the
// line of expect or of the call.
func (r *run) expect(ctx context.Context, s *session, at callAt, c Call, res CallResult) []failure {
	var fails []failure
	add := func(texts []string, member ...any) {
		for _, t := range texts {
			fails = append(fails, failure{r.line(at, append([]any{"expect"}, member...)...), t})
		}
	}
	e := c.Expect
	wantErr := e.Code != "" || (e.IsError != nil && *e.IsError)
	if res.IsError != wantErr {
		member := "is_error"
		if e.IsError == nil && e.Code != "" { // code implies is_error
			member = "code"
		}
		add([]string{fmt.Sprintf("is_error is %v, want %v (%s)", res.IsError, wantErr,
			cut(res.Text, 160))}, member)
	}
	if got := problemCode(res.Doc); e.Code != "" && got != e.Code {
		add([]string{fmt.Sprintf("problem code is %q, want %q", got, e.Code)}, "code")
	}
	if e.MaxTokens > 0 && res.Tokens > e.MaxTokens {
		add([]string{fmt.Sprintf("result is %d estimated tokens, more than %d", res.Tokens,
			e.MaxTokens)}, "max_tokens")
	}
	if e.Valid {
		add(r.valid(ctx, s, c.Tool, res), "valid")
	}
	for k, pc := range e.JSON {
		add(checkPath(pc, res.Doc), "json", k)
	}
	for k, pc := range e.Meta {
		for _, f := range checkPath(pc, res.Meta) {
			add([]string{"_meta " + f}, "meta", k)
		}
	}
	return fails
}

// valid checks the result against the tool's outputSchema.
func (r *run) valid(ctx context.Context, s *session, tool string, res CallResult) []string {
	tools, err := s.listTools(ctx)
	if err != nil {
		return []string{err.Error()}
	}
	for _, t := range tools {
		if t.Name != tool {
			continue
		}
		if res.IsError {
			return []string{"valid: the result is a tool error, outputSchema covers results only"}
		}
		if err := t.validate(res.Doc); err != nil {
			return []string{"valid: " + strings.ReplaceAll(err.Error(), "\n", " ")}
		}
		return nil
	}
	return []string{"valid: tools/list does not show " + tool}
}

// problemCode is the code member of a problem document.
func problemCode(doc any) string {
	if m, ok := doc.(map[string]any); ok {
		if c, ok := m["code"].(string); ok {
			return c
		}
	}
	return ""
}

func anyMap(m map[string]any) any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// prompt is one MCP prompt: a common operator question and the tools that
// answer it, as a user message with the arguments filled in.
type prompt struct {
	name, title, desc string
	uses              []string // the tools its text tells the agent to call
	args              []mcp.PromptOption
	text              func(args map[string]string) string
}

// prompts are the operator questions the server offers as MCP prompts.
var prompts = []prompt{
	{name: "fleet-status", title: "AI fleet status",
		desc: "Summarise the AI fleet: nodes by live status, GPU load and temperature, what each serves.",
		uses: []string{"list-ai-nodes"},
		text: func(map[string]string) string {
			return "Give me the status of the AI fleet. Call list-ai-nodes (fields=hostname,site,gpu_class,status," +
				"online,gpu_util_avg_pct,gpu_temp_max_c,throttle_active,collector_stale,models) and follow " +
				"next_cursor to the end. If monitoring_reachable is false, say that live values are unknown. " +
				"Report nodes by status, any that are offline, throttling, hot (above 85 °C) or whose collector " +
				"is stale, and which models each node serves."
		}},
	{name: "release-readiness", title: "Release readiness of a project",
		desc: "What each environment of a project runs, what awaits approval and whether PROD data is locked.",
		uses: []string{"get-release-state", "list-release-operations"},
		args: []mcp.PromptOption{mcp.WithArgument("project_id", mcp.RequiredArgument(),
			mcp.ArgumentDescription("The project's id"))},
		text: func(a map[string]string) string {
			return "Is project " + a["project_id"] + " ready to release? Call get-release-state with project_id=" +
				a["project_id"] + " for the versions per environment and component, the PROD data lock and the " +
				"open operations; call list-release-operations with project_id=" + a["project_id"] + " and " +
				"status=awaiting_approval for promotions waiting for a person. Say what uat runs that prod does " +
				"not, what awaits approval and whether the PROD data lock is set."
		}},
	{name: "who-changed", title: "Who changed an entity",
		desc: "The audit trail of one entity: who changed it, when, how and from where.",
		uses: []string{"list-audit-events", "get-audit-event"},
		args: []mcp.PromptOption{
			mcp.WithArgument("entity_type", mcp.RequiredArgument(),
				mcp.ArgumentDescription("Entity type as the audit log records it, e.g. customer, project, ai_model")),
			mcp.WithArgument("entity_id", mcp.RequiredArgument(), mcp.ArgumentDescription("The entity's id"))},
		text: func(a map[string]string) string {
			return "Who changed " + a["entity_type"] + " " + a["entity_id"] + ", and what did they change? Call " +
				"list-audit-events with entity_type=" + a["entity_type"] + " and entity_id=" + a["entity_id"] +
				" (fields=id,occurred_at,actor,action,auth_kind,token_id,source_ip first; read single events " +
				"with get-audit-event for their before_state and after_state). List the changes newest first."
		}},
}

// addPrompts registers the prompts; it fails when one names a tool that is
// not served.
func (m *MCP) addPrompts() error {
	m.promptUses, m.promptDefs = map[string][]toolSpec{}, map[string]mcp.Prompt{}
	for _, p := range prompts {
		for _, name := range p.uses {
			s, ok := m.byName[name]
			if !ok {
				return fmt.Errorf("prompt %s uses the tool %s, which is not served", p.name, name)
			}
			m.promptUses[p.name] = append(m.promptUses[p.name], s)
		}
		opts := append([]mcp.PromptOption{mcp.WithPromptTitle(p.title), mcp.WithPromptDescription(p.desc)}, p.args...)
		text, prompt := p.text, mcp.NewPrompt(p.name, opts...)
		m.promptDefs[p.name] = prompt
		m.mcp.AddPrompt(prompt,
			func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				args := map[string]string{} // checked by checkPromptArguments
				for k, v := range req.Params.Arguments {
					args[k] = strings.TrimSpace(v)
				}
				return mcp.NewGetPromptResult(p.desc, []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text(args))),
				}), nil
			})
	}
	return nil
}

// visiblePrompts is the prompt filter of prompts/list and prompts/get: a
// prompt is offered only when tools/list would show every tool it tells
// the agent to call (the token's scopes, the toolsets asked for).
func (m *MCP) visiblePrompts(ctx context.Context, ps []mcp.Prompt) []mcp.Prompt {
	outer, ok := outerFrom(ctx)
	if !ok {
		return ps
	}
	ps = slices.DeleteFunc(slices.Clone(ps), func(p mcp.Prompt) bool {
		return slices.ContainsFunc(m.promptUses[p.Name], func(s toolSpec) bool { return !outer.offers(s) })
	})
	for i := range ps {
		ps[i] = m.withListers(ctx, ps[i])
	}
	return ps
}

// withListers is p with each argument's description naming the tool that
// lists its values ("(list-projects finds it)"), when a tool the prompt
// uses has one for that argument and the caller can call it.
func (m *MCP) withListers(ctx context.Context, p mcp.Prompt) mcp.Prompt {
	p.Arguments = slices.Clone(p.Arguments)
	for i, a := range p.Arguments {
		for _, s := range m.promptUses[p.Name] {
			if l := s.listers[a.Name]; l != "" && m.callable(ctx, l) {
				p.Arguments[i].Description += " (" + l + " finds it)"
				break
			}
		}
	}
	return p
}

// checkPromptArguments refuses a prompts/get of an offered prompt that
// lacks a required argument: -32602 Invalid params naming it (mcp-go
// answers every error of a prompt's handler -32603 Internal error). A
// prompt not offered is left to mcp-go (not found).
func (m *MCP) checkPromptArguments(r *http.Request, msg rpcMessage) *mcp.JSONRPCError {
	if msg.Method != string(mcp.MethodPromptsGet) {
		return nil
	}
	var req struct {
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg.body, &req); err != nil {
		e := rpcError(msg.ID, mcp.INVALID_PARAMS,
			"params must hold the prompt's name and its arguments, names to strings")
		return &e
	}
	p, ok := m.promptDefs[req.Params.Name]
	if !ok || len(m.visiblePrompts(r.Context(), []mcp.Prompt{p})) == 0 {
		return nil
	}
	for _, a := range p.Arguments {
		v, given := req.Params.Arguments[a.Name]
		text, isText := v.(string)
		why := ""
		switch {
		case given && !isText:
			why = "the argument " + a.Name + " must be a string"
		case a.Required && strings.TrimSpace(text) == "":
			why = "the argument " + a.Name + " is required"
		default:
			why = m.promptArgumentOffPattern(r.Context(), p.Name, a.Name, strings.TrimSpace(text))
		}
		if why != "" {
			e := rpcError(msg.ID, mcp.INVALID_PARAMS, why)
			return &e
		}
	}
	return nil
}

// promptArgumentOffPattern says why value cannot be the argument name of
// the prompt: the prompt hands it to a tool whose argument of that name
// has a pattern value does not match (the prompt would tell the agent to
// make calls that can only fail), naming the tool that lists valid values
// when the caller can call it. "" when it fits, or is empty.
func (m *MCP) promptArgumentOffPattern(ctx context.Context, prompt, name, value string) string {
	if value == "" {
		return ""
	}
	for _, s := range m.promptUses[prompt] {
		pattern, _ := s.inputProps[name]["pattern"].(string)
		if pattern == "" {
			continue
		}
		if ok, err := regexp.MatchString(pattern, value); err == nil && !ok {
			why := "the argument " + name + " must match " + pattern
			if l := s.listers[name]; l != "" && m.callable(ctx, l) {
				why += "; " + l + " lists the valid ones"
			}
			return why
		}
	}
	return ""
}

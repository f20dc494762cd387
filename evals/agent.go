package evals

import (
	"context"
	"fmt"
)

// Agent leads agent-driven runs: a model that reads the user's line,
// chooses tool calls and answers.
type Agent interface {
	// Name labels the results ("openai:MODEL").
	Name() string
	// Converse starts the conversation of one run of a suite.
	Converse() Conversation
}

// Conversation is one run's exchange with the model; turns follow each
// other in it.
type Conversation interface {
	// Say gives the model the user's line and the tools; the model calls
	// tools through call until it answers. The answer is returned.
	Say(ctx context.Context, user string, tools []*Tool, call CallFunc) (string, error)
}

// CallFunc calls a tool for the model. A refused or unknown call is a
// result with IsError, never an error.
type CallFunc func(ctx context.Context, name string, args map[string]any) CallResult

func agentName(a Agent) string {
	if a == nil {
		return "scripted"
	}
	return a.Name()
}

// agentTurn hands the turn to the agent, then judges the answer and the
// trajectory of tool names it called.
func (r *run) agentTurn(ctx context.Context, i int, s *session, t Turn) error {
	tools, err := s.listTools(ctx)
	if err != nil {
		return err
	}
	if r.conv == nil {
		r.conv = r.opts.Agent.Converse()
	}
	var names []string
	call := func(ctx context.Context, name string, args map[string]any) CallResult {
		names = append(names, name)
		res, err := r.call(ctx, s, name, args)
		if err != nil {
			res = CallResult{Tool: name, IsError: true, Text: err.Error()}
			r.res.Calls++
			r.res.Tools = append(r.res.Tools, CallSummary{Tool: name, IsError: true})
		}
		return res
	}
	answer, err := r.conv.Say(ctx, t.User, tools, call)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	r.res.Answers = append(r.res.Answers, answer)
	if t.Answer != nil {
		for _, f := range judgeAnswer(*t.Answer, answer) {
			r.failAt(r.file.line("turns", i, "answer"), "turns[%d]: %s", i, f)
		}
	}
	if t.Trajectory != nil {
		if msg := judgeTrajectory(*t.Trajectory, names); msg != "" {
			r.failAt(r.file.line("turns", i, "trajectory"), "turns[%d]: %s", i, msg)
		}
	}
	return nil
}

// Package evals holds the agent evaluation suites (evals/suites/*.yaml) and
// their runner. A suite is a scripted agent conversation: setup steps over
// REST or portal commands, then turns whose tool calls are played over MCP
// against a server, each result checked against expectations. The same
// suites can be handed to a model (an OpenAI-compatible chat-completions
// endpoint) whose final answer and trajectory of tool calls are judged.
//
// The package talks to the server over the wire only (MCP at /mcp, REST
// under /api/v1); portal commands are run through a function the caller
// provides (the platformapi binary runs its own `portal` commands).
package evals

import "encoding/json"

// Suite is one suite file. Its JSON Schema is evals/suite.schema.json.
type Suite struct {
	Name        string  `json:"name" jsonschema:"required,pattern=^[a-z0-9][a-z0-9-]*$,maxLength=80" jsonschema_description:"Suite id: lower-case letters, digits and '-'; unique among the files of one run."`
	Description string  `json:"description" jsonschema:"required,minLength=1" jsonschema_description:"What an operator asks and what a good answer shows."`
	Fixture     Fixture `json:"fixture,omitempty" jsonschema_description:"The world the suite starts from."`
	Turns       []Turn  `json:"turns" jsonschema:"required,minItems=1" jsonschema_description:"The conversation, in order."`
}

// Fixture is the world a suite starts from: the demo world (what
// `serve --demo` loads), a token for the suite, and setup steps.
type Fixture struct {
	World string     `json:"world,omitempty" jsonschema:"enum=demo,default=demo" jsonschema_description:"The data set the server holds; only the demo world exists."`
	Token *TokenSpec `json:"token,omitempty" jsonschema_description:"The token the suite's calls use. Omitted: a fresh token of the demo administrator with every scope (needs portal access), else the runner's --token."`
	Setup []Step     `json:"setup,omitempty" jsonschema_description:"Steps run before the first turn, in order."`
}

// TokenSpec asks for a fresh token minted in the portal for the suite.
type TokenSpec struct {
	Scopes []string `json:"scopes" jsonschema:"required,minItems=1" jsonschema_description:"Permission keys of the token."`
	As     string   `json:"as,omitempty" jsonschema_description:"E-mail of the person minting it (and owning it); default the demo administrator."`
	Days   int      `json:"days,omitempty" jsonschema:"minimum=1,maximum=365" jsonschema_description:"Lifetime in days; default 90."`
}

// Step is one setup step: a REST request or a portal command, optionally
// repeated, whose JSON answer may be captured.
type Step struct {
	Name    string            `json:"name,omitempty" jsonschema_description:"What the step does, for messages."`
	REST    *RESTStep         `json:"rest,omitempty" jsonschema_description:"A request to the REST API. Exactly one of rest and portal."`
	Portal  []string          `json:"portal,omitempty" jsonschema:"minItems=1" jsonschema_description:"Arguments of 'platformapi portal', e.g. [token, create, --as, admin@demo.example, ...]; {{var}} templates allowed."`
	Repeat  int               `json:"repeat,omitempty" jsonschema:"minimum=1,maximum=2000" jsonschema_description:"Run the step this many times (default 1); captures see the last answer."`
	Capture map[string]string `json:"capture,omitempty" jsonschema_description:"Variable name to JSONPath into the step's JSON answer: the single match of a singular path, else the first match."`
}

// RESTStep is a request to the REST API under /api/v1.
type RESTStep struct {
	Method  string            `json:"method" jsonschema:"required,enum=GET,enum=POST,enum=PUT,enum=PATCH,enum=DELETE"`
	Path    string            `json:"path" jsonschema:"required,pattern=^/" jsonschema_description:"Path (and query) under /api/v1; {{var}} templates allowed."`
	Body    any               `json:"body,omitempty" jsonschema_description:"JSON body; strings may hold {{var}} templates."`
	Headers map[string]string `json:"headers,omitempty" jsonschema_description:"Extra request headers."`
	Token   string            `json:"token,omitempty" jsonschema_description:"Bearer token ({{var}}); default the suite's token."`
	Status  int               `json:"status,omitempty" jsonschema:"minimum=100,maximum=599" jsonschema_description:"Expected status; default any 2xx."`
	// Until makes a repeated step stop at the first answer of this status
	// (any 2xx before it is fine); never reaching it within repeat fails.
	Until int `json:"until_status,omitempty" jsonschema:"minimum=100,maximum=599" jsonschema_description:"With repeat: send until the answer has this status (2xx answers before it are fine), at most repeat times; never reaching it is a failure."`
}

// Turn is one exchange: the user's line, the scripted agent's tool calls
// and, for agent-driven runs, what the final answer and trajectory must be.
type Turn struct {
	User       string      `json:"user" jsonschema:"required,minLength=1" jsonschema_description:"What the operator asks."`
	Token      string      `json:"token,omitempty" jsonschema_description:"Bearer token of this turn's MCP session ({{var}}); default the suite's token."`
	Calls      []Call      `json:"calls,omitempty" jsonschema_description:"The scripted agent's tool calls, in order."`
	Answer     *Answer     `json:"answer,omitempty" jsonschema_description:"Agent-driven runs: what the final answer must hold."`
	Trajectory *Trajectory `json:"trajectory,omitempty" jsonschema_description:"Agent-driven runs: the tools the agent must call. Scripted runs check their own calls against it."`
}

// Call is one tool call of the scripted agent, or one call per element of
// a captured list (ForEach).
type Call struct {
	Tool    string            `json:"tool" jsonschema:"required,pattern=^[a-z][a-z0-9-]*$" jsonschema_description:"MCP tool name."`
	ForEach *ForEach          `json:"for_each,omitempty" jsonschema_description:"Make the call once per element of a captured list; expect applies to every call. No capture then."`
	Args    map[string]any    `json:"args,omitempty" jsonschema_description:"Tool arguments; a string that is exactly {{var}} (or {{var.member}}) becomes the captured value, other strings are interpolated."`
	Expect  Expect            `json:"expect,omitempty" jsonschema_description:"What the result must be."`
	Capture map[string]string `json:"capture,omitempty" jsonschema_description:"Variable name to JSONPath into the result's JSON: the single match of a singular path, else the first match."`
}

// MaxForEach is the most elements a for_each plays; a longer list fails
// the call without making it.
const MaxForEach = 100

// ForEach repeats a call once per element of a list captured earlier (a
// singular path such as $.items captures the whole array). The element is
// the variable As, in the call's args only; {{as.member}} reaches a member
// of an element that is an object.
type ForEach struct {
	In string `json:"in" jsonschema:"required" jsonschema_description:"The list: exactly one {{var}} (or {{var.member}}) captured earlier; at most 100 elements."`
	As string `json:"as" jsonschema:"required,pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_description:"Name of the element in the call's args; must not be a name captured before."`
}

// Expect are the checks on one tool result.
type Expect struct {
	IsError   *bool       `json:"is_error,omitempty" jsonschema_description:"Whether the result is a tool error; default false unless code is given."`
	Code      string      `json:"code,omitempty" jsonschema:"pattern=^[a-z][a-z0-9_]*$" jsonschema_description:"Problem code of a tool error (implies is_error)."`
	Valid     bool        `json:"valid,omitempty" jsonschema_description:"The structured content validates against the tool's outputSchema; fails when the tool has none."`
	MaxTokens int         `json:"max_tokens,omitempty" jsonschema:"minimum=1" jsonschema_description:"At most this many estimated tokens (text bytes / 4, rounded up)."`
	JSON      []PathCheck `json:"json,omitempty" jsonschema_description:"JSONPath checks on the result's JSON (structured content, else the text as JSON)."`
	Meta      []PathCheck `json:"meta,omitempty" jsonschema_description:"JSONPath checks on the result's _meta object, e.g. $['platformapi/rate_limit'].remaining."`
}

// PathCheck is one JSONPath check. The value a path selects is the single
// match of a singular path (names and indexes only), else the array of
// every match. At least one check member besides path is required. The
// aggregates (count, sum, min, max) take the selected value's elements (an
// array's elements, else the value itself; nothing selected: none).
type PathCheck struct {
	Path     string          `json:"path" jsonschema:"required,pattern=^\\$" jsonschema_description:"JSONPath (RFC 9535 syntax), e.g. $.items[*].hostname."`
	Eq       json.RawMessage `json:"eq,omitempty" jsonschema_description:"The value equals this (JSON equality; null allowed)."`
	Contains json.RawMessage `json:"contains,omitempty" jsonschema_description:"An array value has an element equal to this; a string value contains this string."`
	Len      *int            `json:"len,omitempty" jsonschema:"minimum=0" jsonschema_description:"Length of the array, string or object."`
	Exists   *bool           `json:"exists,omitempty" jsonschema_description:"Whether the path matches anything."`
	Matches  string          `json:"matches,omitempty" jsonschema_description:"Go regular expression every selected string (numbers as JSON text) must match."`
	Count    *Bound          `json:"count,omitempty" jsonschema_description:"How many elements are selected."`
	Sum      *Bound          `json:"sum,omitempty" jsonschema_description:"Sum of the selected elements, which must all be numbers (none: 0)."`
	Min      *Bound          `json:"min,omitempty" jsonschema_description:"Least of the selected elements, which must all be numbers (none: a failure)."`
	Max      *Bound          `json:"max,omitempty" jsonschema_description:"Greatest of the selected elements, which must all be numbers (none: a failure)."`
}

// Bound is what an aggregate must be: exactly eq, or within at_least and
// at_most (either may be left out). Numbers are equal within a relative
// 1e-9, so that sums of decimals compare as written.
type Bound struct {
	Eq      *float64 `json:"eq,omitempty" jsonschema_description:"Exactly this number. Not with at_least or at_most."`
	AtLeast *float64 `json:"at_least,omitempty" jsonschema_description:"At least this number."`
	AtMost  *float64 `json:"at_most,omitempty" jsonschema_description:"At most this number."`
}

// Answer is what an agent's final answer must hold.
type Answer struct {
	Contains []string `json:"contains,omitempty" jsonschema_description:"Each string must appear in the answer (case-insensitive)."`
	Matches  string   `json:"matches,omitempty" jsonschema_description:"Go regular expression the answer must match."`
}

// Trajectory is the expected sequence of tool names of a turn.
type Trajectory struct {
	Mode  string   `json:"mode,omitempty" jsonschema:"enum=strict,enum=unordered,enum=subset,enum=superset,default=superset" jsonschema_description:"strict: exactly these calls in this order; unordered: the same calls in any order; subset: every call is one of these; superset: each of these is called (others allowed)."`
	Tools []string `json:"tools" jsonschema:"required" jsonschema_description:"Tool names."`
}

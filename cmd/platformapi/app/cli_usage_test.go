package app

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"platformapi/bunstore/pgtest"
)

// execute runs one command line in-process and returns its stdout and
// error (the error main prints on one line after "platformapi: ").
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// refusedWith checks that err is a one-line refusal holding every want and
// none of the internal texts in never.
func refusedWith(t *testing.T, args []string, err error, want []string, never ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%v: no error, want a refusal naming %q", args, want)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%v: %q is not one line", args, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%v: %q, want it to name %q", args, msg, w)
		}
	}
	for _, n := range never {
		if strings.Contains(msg, n) {
			t.Errorf("%v: %q holds internal text %q", args, msg, n)
		}
	}
}

// TestCLI_UnknownSubcommandOfAGroup_RefusedNotHelpWithExit0: a mistyped
// sub-command under portal, token or migrate printed the group's help and
// exited 0, so a script's typo "succeeded"; it is refused naming the word
// and the group. The group alone still prints its help.
func TestCLI_UnknownSubcommandOfAGroup_RefusedNotHelpWithExit0(t *testing.T) {
	cases := []struct {
		args        []string
		word, group string
	}{
		{[]string{"portal", "tokn", "create"}, "tokn", `platformapi portal" (did you mean "token"?)`},
		{[]string{"portal", "token", "rvoke", "1"}, "rvoke", "platformapi portal token"},
		{[]string{"migrate", "upp"}, "upp", "platformapi migrate"},
		{[]string{"portal", "licence", "instal"}, "instal", "platformapi portal licence"},
	}
	for _, tc := range cases {
		out, err := execute(t, tc.args...)
		refusedWith(t, tc.args, err, []string{`unknown command "` + tc.word + `"`, tc.group})
		if out != "" {
			t.Errorf("%v: printed %q, want nothing on stdout", tc.args, out)
		}
	}
	out, err := execute(t, "portal")
	if err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("portal alone: %v, %q; want its help", err, out)
	}
}

// TestCLI_WrongArgumentCount_NamesTheArgument: "accepts 1 arg(s), received
// 0" does not say which argument is missing; the refusal names the command
// and its usage line.
func TestCLI_WrongArgumentCount_NamesTheArgument(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"portal", "token", "revoke"}, []string{"portal token revoke", "ID"}},
		{[]string{"portal", "token", "revoke", "1", "2"}, []string{"portal token revoke", "ID", `"2"`}},
		{[]string{"portal", "node-key"}, []string{"portal node-key", "HOSTNAME"}},
		{[]string{"portal", "role", "create"}, []string{"portal role create", "NAME"}},
		{[]string{"portal", "inventory", "import"}, []string{"portal inventory import", "FILE"}},
		{[]string{"eval"}, []string{"eval", "FILES"}},
		{[]string{"migrate", "up", "now"}, []string{"migrate up", "no arguments", `"now"`}},
		{[]string{"node-agent", "x"}, []string{"node-agent", "no arguments", `"x"`}},
	}
	for _, tc := range cases {
		_, err := execute(t, tc.args...)
		refusedWith(t, tc.args, err, tc.want, "arg(s)")
	}
}

// TestCLI_BadFlagValue_InWordsNamingTheFlag: a number or a switch that does
// not parse is refused naming the flag (or its variable) and what it
// wants, not with Go's strconv.ParseInt text.
func TestCLI_BadFlagValue_InWordsNamingTheFlag(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{nil, []string{"portal", "token", "create", "--as", "a@b.c", "--name", "n", "--scopes", "s",
			"--days", "abc"}, []string{"--days", `"abc"`, "integer"}},
		{nil, []string{"serve", "--demo=maybe"}, []string{"--demo", `"maybe"`, "true or false"}},
		{nil, []string{"serve", "--job-timeout", "soon"}, []string{"--job-timeout", `"soon"`, "30s"}},
		{map[string]string{"PLATFORMAPI_NODE_AGENT_MAX_COPIES": "abc"}, []string{"node-agent"},
			[]string{"PLATFORMAPI_NODE_AGENT_MAX_COPIES", "--max-copies", "integer"}},
		{nil, []string{"eval", "--repeat", "99999999999999999999", "f.yaml"},
			[]string{"--repeat", "out of range"}},
	}
	for _, tc := range cases {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		_, err := execute(t, tc.args...)
		refusedWith(t, tc.args, err, tc.want, "strconv", "Parse", "time: ")
	}
}

// TestPortal_UnmigratedDatabase_SaysRunMigrateUp: a portal command against
// a database that was never migrated answered `ERROR: relation "users"
// does not exist (SQLSTATE 42P01)`; it says the schema is missing and
// which command applies it, and writes nothing.
func TestPortal_UnmigratedDatabase_SaysRunMigrateUp(t *testing.T) {
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "cli-test-pepper-0123456789")
	dsn := pgtest.EmptyDSN(t)
	for _, args := range [][]string{
		{"portal", "user", "create", "--email", "a@example.test", "--name", "A"},
		{"portal", "licence", "show"},
		{"portal", "role", "list"},
	} {
		global := []string{"--database-url", dsn, "--log-level", "error"}
		out, err := execute(t, append(global, args...)...)
		refusedWith(t, args, err, []string{"not migrated", "platformapi migrate up"},
			"SQLSTATE", "relation")
		if out != "" {
			t.Errorf("%v: printed %q", args, out)
		}
	}
	_, err := execute(t, "--database-url", dsn, "--log-level", "error", "migrate", "status")
	if err != nil {
		t.Errorf("migrate status on the unmigrated database: %v", err)
	}
}

// TestNodeAgent_MissingOrNegativeFlag_RefusedNamingFlagAndVariable: the
// agent without --key-file said "the node key must look like pnk_…", as if
// the key were wrong; a missing root or a negative limit did not name its
// flag either.
func TestNodeAgent_MissingOrNegativeFlag_RefusedNamingFlagAndVariable(t *testing.T) {
	dir := t.TempDir()
	roots := []string{"--store-root", dir + "/s", "--cache-root", dir + "/c"}
	cases := []struct {
		args []string
		want []string
	}{
		{nil, []string{"--store-root", "PLATFORMAPI_NODE_AGENT_STORE_ROOT", "required"}},
		{[]string{"--store-root", dir}, []string{"--cache-root", "PLATFORMAPI_NODE_AGENT_CACHE_ROOT"}},
		{roots, []string{"--key-file", "PLATFORMAPI_NODE_AGENT_KEY_FILE", "required"}},
		{append(roots, "--key-file", dir+"/k", "--max-copies", "-1"),
			[]string{"--max-copies", "PLATFORMAPI_NODE_AGENT_MAX_COPIES", "negative"}},
		{append(roots, "--key-file", dir+"/k", "--max-cache-bytes", "-5"),
			[]string{"--max-cache-bytes", "negative"}},
	}
	for _, tc := range cases {
		args := append([]string{"node-agent", "--addr", "127.0.0.1:0"}, tc.args...)
		_, err := execute(t, args...)
		refusedWith(t, args, err, tc.want, "pnk_")
	}
}

// TestEval_RepeatOrMaxStepsBelowOne_Refused: --repeat 0 (or negative) ran
// each suite once and reported pass^1 as if asked; it is refused by name
// before anything is built, as is --max-steps 0.
func TestEval_RepeatOrMaxStepsBelowOne_Refused(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "--repeat", "0", "f.yaml"},
		{"eval", "--repeat", "-2", "f.yaml"},
		{"eval", "--max-steps", "0", "f.yaml"},
	} {
		_, err := execute(t, args...)
		refusedWith(t, args, err, []string{args[1], "at least 1"})
	}
}

// TestEval_Help_ShowsVariablesNeverTheTokenValue: eval --help showed the
// value of PLATFORMAPI_EVAL_TOKEN as the default of --token, printing a
// token; it names the variables of --token, --base-url, --model and the
// model's key, and shows no value of them. The variable still gives the
// token when --token is not given.
func TestEval_Help_ShowsVariablesNeverTheTokenValue(t *testing.T) {
	t.Setenv("PLATFORMAPI_EVAL_TOKEN", "svc_pat_SECRETVALUE")
	t.Setenv("PLATFORMAPI_EVAL_MODEL", "model-from-env")
	out, err := execute(t, "eval", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, never := range []string{"SECRETVALUE", "model-from-env"} {
		if strings.Contains(out, never) {
			t.Errorf("eval --help shows %q:\n%s", never, out)
		}
	}
	for _, want := range []string{"PLATFORMAPI_EVAL_TOKEN", "PLATFORMAPI_EVAL_BASE_URL",
		"PLATFORMAPI_EVAL_MODEL", "PLATFORMAPI_EVAL_API_KEY"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval --help does not name %s:\n%s", want, out)
		}
	}
	suite := "../../../evals/suites/fleet-gpu-total.yaml"
	_, err = execute(t, "eval", "--target", "http://127.0.0.1:1", suite)
	if !errors.Is(err, ErrSuitesFailed) { // the token came from the variable; the target is down
		t.Errorf("eval --target with PLATFORMAPI_EVAL_TOKEN: %v, want the suite run (and failed)", err)
	}
}

// TestCLI_PepperFileUnreadable_NamesTheFlagAndVariable: a --token-pepper-file
// that cannot be read said "read token pepper: open …", naming neither the
// flag nor its variable (a too short one named the flag already).
func TestCLI_PepperFileUnreadable_NamesTheFlagAndVariable(t *testing.T) {
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "")
	args := []string{"--database-url", pgtest.DSN(t), "--token-pepper-file", t.TempDir() + "/none",
		"portal", "role", "list"}
	_, err := execute(t, args...)
	refusedWith(t, args, err, []string{"--token-pepper-file", "PLATFORMAPI_TOKEN_PEPPER_FILE", "/none"})
}

// TestCLI_Help_EveryCommandSaysWhatItDoes: every command has a one-line
// summary of its own, capitalised as the others; `portal release reject`
// said "Approve or reject …" like approve, and `api enable|disable` were
// lower case.
func TestCLI_Help_EveryCommandSaysWhatItDoes(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		seen := map[string]string{}
		for _, sub := range c.Commands() {
			s := sub.Short
			if s == "" || strings.ToUpper(s[:1]) != s[:1] {
				t.Errorf("%s: summary %q, want one starting with a capital", sub.CommandPath(), s)
			}
			if other, dup := seen[s]; dup {
				t.Errorf("%s and %s say the same: %q", other, sub.CommandPath(), s)
			}
			seen[s] = sub.CommandPath()
			walk(sub)
		}
	}
	walk(NewRootCommand(io.Discard, io.Discard))
}

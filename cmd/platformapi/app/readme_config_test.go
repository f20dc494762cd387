package app

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"platformapi/api/apitest"
)

// subcommand is root's command named name.
func subcommand(t testing.TB, root *cobra.Command, name string) *cobra.Command {
	t.Helper()
	c, _, err := root.Find([]string{name})
	if err != nil || c.Name() != name {
		t.Fatalf("no command %s: %v", name, err)
	}
	return c
}

// flagRow is the README row of cmd's flag f; scope is "" for a global
// flag, else the command's name.
func flagRow(cmd *cobra.Command, f *pflag.Flag, scope string) string {
	key, label := "--"+f.Name, "`--"+f.Name+"`"
	if scope != "" {
		key = scope + " " + key
		if scope == "serve" {
			label += " (serve)"
		}
	}
	doc := flagDocs[key]
	names := envNames(cmd, f)
	var env []string
	for _, n := range names {
		env = append(env, "`"+n+"`")
	}
	if doc.Env != "" {
		env = append(env, doc.Env)
	}
	def := doc.Default
	switch {
	case def != "":
	case f.DefValue == "" || f.DefValue == "[]":
		def = "(empty)"
	case f.Value.Type() == "bool" && f.DefValue == "false":
		def = "off"
	default:
		def = "`" + f.DefValue + "`"
	}
	meaning := f.Usage
	if i := strings.LastIndex(meaning, " (env "); i >= 0 && strings.HasSuffix(meaning, ")") {
		meaning = meaning[:i] // what sayEnv appended: the env column says it
	}
	meaning = placeholder.ReplaceAllString(meaning, "`$0`")
	if doc.Note != "" {
		meaning += "; " + doc.Note
	}
	cells := []string{label, strings.Join(env, ", "), def, meaning}
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// placeholder is a path with <placeholders> in a usage, code in Markdown.
var placeholder = regexp.MustCompile(`[\w./-]*<[\w-]+>[\w./<>-]*`)

const tableHead = "| flag | env | default | meaning |\n|---|---|---|---|\n"

// configurationTable is the README's table of the global and serve flags.
func configurationTable(t testing.TB, root *cobra.Command) string {
	var b strings.Builder
	b.WriteString(tableHead)
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { b.WriteString(flagRow(root, f, "")) })
	serve := subcommand(t, root, "serve")
	serve.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			b.WriteString(flagRow(serve, f, "serve"))
		}
	})
	b.WriteString(strings.Join(configExtraRows, "\n") + "\n")
	return b.String()
}

// nodeAgentTable is the README's table of the node agent's flags.
func nodeAgentTable(t testing.TB, root *cobra.Command) string {
	var b strings.Builder
	b.WriteString(tableHead)
	agent := subcommand(t, root, "node-agent")
	agent.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && envNames(agent, f) != nil {
			b.WriteString(flagRow(agent, f, "node-agent"))
		}
	})
	return b.String()
}

// TestREADME_ConfigurationTables_FromTheFlags: the README's tables of the
// server's and the node agent's flags are generated from their
// declarations (usage, default, environment variables) and flagDocs;
// UPDATE_README=1 rewrites them.
func TestREADME_ConfigurationTables_FromTheFlags(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	apitest.SyncREADMEPart(t, "../../../README.md", "configuration table", configurationTable(t, root))
	apitest.SyncREADMEPart(t, "../../../README.md", "node agent table", nodeAgentTable(t, root))
}

// TestFlagDocs_NameDeclaredFlags: every note of flagDocs belongs to a flag
// that exists (a renamed flag must not leave its note behind).
func TestFlagDocs_NameDeclaredFlags(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	for key := range flagDocs {
		scope, name, ok := strings.Cut(key, " ")
		cmd := root
		if !ok {
			name = scope
		} else {
			cmd = subcommand(t, root, scope)
		}
		if cmd.Flags().Lookup(strings.TrimPrefix(name, "--")) == nil {
			t.Errorf("flagDocs[%q]: no such flag", key)
		}
	}
}

package app

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestEnvFlags_EveryServeGlobalAndNodeAgentFlagHasAVariable: no flag of
// serve, of the node agent or global is without its PLATFORMAPI_ variable.
func TestEnvFlags_EveryServeGlobalAndNodeAgentFlagHasAVariable(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	check := func(scope string, names []string, f *pflag.Flag, prefix string) {
		if len(names) == 0 || !strings.HasPrefix(names[0], prefix) {
			t.Errorf("%s --%s: variables %v, want %s…", scope, f.Name, names, prefix)
		}
	}
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { check("global", envNames(root, f), f, envPrefix) })
	for _, name := range []string{"serve", "node-agent"} {
		cmd := subcommand(t, root, name)
		prefix := map[string]string{"serve": envPrefix, "node-agent": nodeAgentEnv}[name]
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				check(name, envNames(cmd, f), f, prefix)
			}
		})
	}
}

// TestEnvFlags_ServeFlagWinsVariableUsedAliasRefusedByName: how serve's
// flags meet the environment.
func TestEnvFlags_ServeFlagWinsVariableUsedAliasRefusedByName(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want map[string]string // flag: value after the environment
		err  string
	}{
		{"variable used without the flag", map[string]string{"PLATFORMAPI_ADDR": "0.0.0.0:9000",
			"PLATFORMAPI_TRUSTED_PROXIES": "10.0.0.0/8", "PLATFORMAPI_REQUEST_TIMEOUT": "5s",
			"PLATFORMAPI_DEMO": "true", "PLATFORMAPI_LOG_LEVEL": "debug"}, nil,
			map[string]string{"addr": "0.0.0.0:9000", "trusted-proxies": "10.0.0.0/8", "request-timeout": "5s",
				"demo": "true", "log-level": "debug"}, ""},
		{"flag wins", map[string]string{"PLATFORMAPI_ADDR": "0.0.0.0:9000",
			"PLATFORMAPI_STATEMENT_TIMEOUT": "1s"}, []string{"--addr", ":1", "--statement-timeout", "2s"},
			map[string]string{"addr": ":1", "statement-timeout": "2s"}, ""},
		{"the documented names still read", map[string]string{"DATABASE_URL": "postgres://a",
			"REDIS_URL": "redis://b"}, nil, map[string]string{"database-url": "postgres://a",
			"redis-url": "redis://b"}, ""},
		{"PLATFORMAPI_ before the documented name", map[string]string{"DATABASE_URL": "postgres://a",
			"PLATFORMAPI_DATABASE_URL": "postgres://c"}, nil, map[string]string{"database-url": "postgres://c"}, ""},
		{"a value that does not parse", map[string]string{"PLATFORMAPI_JOB_TIMEOUT": "soon"}, nil, nil,
			"PLATFORMAPI_JOB_TIMEOUT"},
		{"a log level that is none", map[string]string{"PLATFORMAPI_LOG_LEVEL": "banana"}, nil, nil,
			"PLATFORMAPI_LOG_LEVEL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			serve := subcommand(t, NewRootCommand(io.Discard, io.Discard), "serve")
			if err := serve.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			err := applyEnv(serve, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name := range tc.want {
				got[name] = serve.Flags().Lookup(name).Value.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodeAgentHelp_OnlyTheAgentsFlagsLogLevelWithItsVariables: node-agent
// --help lists the agent's flags and, of the global ones, --log-level with
// the variables the agent reads for it (its own first); the server's
// global flags (a database, Redis, a data directory) are not offered.
func TestNodeAgentHelp_OnlyTheAgentsFlagsLogLevelWithItsVariables(t *testing.T) {
	var out bytes.Buffer
	root := NewRootCommand(&out, io.Discard)
	root.SetArgs([]string{"node-agent", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"--cache-root", "--key-file",
		"(env PLATFORMAPI_NODE_AGENT_LOG_LEVEL, PLATFORMAPI_LOG_LEVEL)"} {
		if !strings.Contains(help, want) {
			t.Errorf("node-agent --help lacks %q:\n%s", want, help)
		}
	}
	for _, server := range []string{"--database-url", "--redis-url", "--data-dir", "--token-pepper-file"} {
		if strings.Contains(help, server) {
			t.Errorf("node-agent --help offers the server's %s", server)
		}
	}
}

// TestNodeAgentHelp_LeavesTheRootsFlagsAsTheyWere: node-agent's help hides
// the server's global flags for its own page only; the same command tree
// asked for its root help afterwards still offers them, and a second
// node-agent --help names the agent's variables once.
func TestNodeAgentHelp_LeavesTheRootsFlagsAsTheyWere(t *testing.T) {
	var out bytes.Buffer
	root := NewRootCommand(&out, io.Discard)
	for _, args := range [][]string{{"node-agent", "--help"}, {"node-agent", "--help"}} {
		out.Reset()
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(out.String(), "PLATFORMAPI_NODE_AGENT_LOG_LEVEL"); n != 1 {
		t.Errorf("the second node-agent --help names the agent's variable %d times:\n%s", n, out.String())
	}
	out.Reset()
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--database-url", "--redis-url", "--data-dir",
		"--log-level level", "debug, info, warn or error (env PLATFORMAPI_LOG_LEVEL) (default info)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("root --help after node-agent --help lacks %q:\n%s", want, out.String())
		}
	}
}

// TestServe_PortalURL_NotAnAbsoluteHTTPURLRefusedByName: --portal-url (or
// PLATFORMAPI_PORTAL_URL) is the portal's external base URL, the start of
// the redirect URI the OpenID provider sends browsers back to; a value that
// is not an absolute http(s) URL with a host (and no query, fragment or
// user) is refused naming the flag before serve opens the database, not
// taken as it is and every sign-in broken later.
func TestServe_PortalURL_NotAnAbsoluteHTTPURLRefusedByName(t *testing.T) {
	serve := func(portalURL string) error { // the database cannot be reached: serve stops there at the latest
		root := NewRootCommand(io.Discard, io.Discard)
		root.SetArgs([]string{"--database-url", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1",
			"serve", "--addr", "127.0.0.1:0", "--portal-url", portalURL})
		return root.Execute()
	}
	for _, bad := range []string{"platform.example.com", "//platform.example.com", "ftp://platform.example.com",
		"https://", "https://platform.example.com/?a=1", "https://platform.example.com/#x",
		"https://admin@platform.example.com"} {
		if err := serve(bad); err == nil || !strings.Contains(err.Error(), "--portal-url") {
			t.Errorf("--portal-url %q: %v, want a refusal naming --portal-url", bad, err)
		}
	}
	for _, good := range []string{"https://platform.example.com", "https://platform.example.com/",
		"http://127.0.0.1:8080", "https://example.com/platform"} {
		if err := serve(good); err == nil || strings.Contains(err.Error(), "--portal-url") {
			t.Errorf("--portal-url %q: %v, want it taken (then the database refused)", good, err)
		}
	}
}

// TestServe_EmptyAddr_RefusedByName: an empty --addr of serve or the node agent (a unit passing
// --addr=${PLATFORMAPI_ADDR} with the variable unset) would listen on every
// interface at a random port; serve refuses it naming the flag, before it
// opens the database.
func TestServe_EmptyAddr_RefusedByName(t *testing.T) {
	dir := t.TempDir()
	for _, addr := range []string{"", " "} {
		for command, args := range map[string][]string{
			"serve": {"--database-url", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", "serve",
				"--addr=" + addr},
			"node-agent": {"node-agent", "--addr=" + addr, "--store-root", dir, "--cache-root", dir,
				"--key-file", dir},
		} {
			root := NewRootCommand(io.Discard, io.Discard)
			root.SetArgs(args)
			if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--addr is empty") {
				t.Errorf("%s --addr %q: %v, want a refusal naming --addr", command, addr, err)
			}
		}
	}
}

// TestServe_BadNetwork_RefusedInWordsNamingFlagAndVariable: a network list
// that does not parse is refused naming the flag, its variable and the
// entry, with what a network looks like, not Go's netip.ParsePrefix(…).
func TestServe_BadNetwork_RefusedInWordsNamingFlagAndVariable(t *testing.T) {
	for flag, env := range map[string]string{"--allowed-networks": "PLATFORMAPI_ALLOWED_NETWORKS",
		"--trusted-proxies": "PLATFORMAPI_TRUSTED_PROXIES"} {
		root := NewRootCommand(io.Discard, io.Discard)
		root.SetArgs([]string{"--database-url", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1",
			"serve", flag + "=10.0.0.0/8, 10.1.2.3"})
		err := root.Execute()
		for _, want := range []string{flag, env, `"10.1.2.3"`, "10.0.0.0/8"} {
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "netip") {
				t.Errorf("%s: %v, want a refusal in words naming %s", flag, err, want)
			}
		}
	}
}

// TestNodeAgent_ServerGlobalFlag_RefusedNamingTheFlag: the agent took the
// server's global flags (--database-url, --token-pepper-file, …), which its
// --help does not offer, and ran as if they meant something; each is
// refused as an unknown flag naming it (exit 1, as every usage error),
// wherever it stands on the line, before anything starts.
func TestNodeAgent_ServerGlobalFlag_RefusedNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	own := []string{"--addr", "127.0.0.1:0", "--store-root", dir, "--cache-root", dir,
		"--key-file", dir + "/missing-key"}
	cases := []struct {
		name, flag string
		args       []string
	}{
		{"database-url", "--database-url", []string{"node-agent", "--database-url", "postgres://x/y"}},
		{"pepper file, = form", "--token-pepper-file",
			[]string{"node-agent", "--token-pepper-file=" + dir + "/p"}},
		{"before the command", "--redis-url", []string{"--redis-url", "redis://x", "node-agent"}},
		{"data-dir", "--data-dir", []string{"node-agent", "--data-dir", dir}},
		{"licence key", "--licence-public-key", []string{"node-agent", "--licence-public-key", "x"}},
		{"frozen clock", "--frozen-clock", []string{"node-agent", "--frozen-clock", "nonsense"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, own...)
			out, err := execute(t, args...)
			refusedWith(t, args, err, []string{"unknown flag: " + tc.flag, "platformapi node-agent --help"},
				"missing-key")
			if out != "" {
				t.Errorf("printed %q, want nothing on stdout", out)
			}
		})
	}
	args := append([]string{"node-agent", "--log-level", "debug"}, own...)
	if _, err := execute(t, args...); err == nil || strings.Contains(err.Error(), "unknown flag") {
		t.Errorf("--log-level, the one global flag the agent takes: %v, want the agent's refusal", err)
	}
}

// TestHelp_NamesEveryVariableTheReadmeNames: the README's configuration
// table names variables that go with a flag beyond its own
// (PLATFORMAPI_GITLAB_TOKEN with --gitlab-url); --help of the flag's
// command names each of them too, where serve --help left the code host's
// token and the webhook secret out.
func TestHelp_NamesEveryVariableTheReadmeNames(t *testing.T) {
	variable := regexp.MustCompile(`[A-Z][A-Z0-9_]+`)
	for key, doc := range flagDocs {
		for _, name := range variable.FindAllString(doc.Env, -1) {
			cmd, _, _ := strings.Cut(key, " --")
			args := []string{"--help"}
			if strings.HasPrefix(key, "--") {
				cmd = ""
			} else {
				args = []string{cmd, "--help"}
			}
			var out bytes.Buffer
			root := NewRootCommand(&out, io.Discard)
			root.SetArgs(args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), name) {
				t.Errorf("%s: the README names %s, `platformapi %s --help` does not", key, name, cmd)
			}
		}
	}
}

package app

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix prefixes the environment variable of each global and serve
// flag (PLATFORMAPI_<FLAG>, upper snake case); the node agent's have
// nodeAgentEnv.
const envPrefix = "PLATFORMAPI_"

// envAliases are variables a flag also reads, after its own, because the
// README named them before every flag had one.
var envAliases = map[string][]string{
	"database-url": {"DATABASE_URL"},
	"redis-url":    {"REDIS_URL"},
}

// envNames are the environment variables flag f of cmd reads when it is not
// given on the command line, in order of precedence: the node agent's own
// flags read PLATFORMAPI_NODE_AGENT_<FLAG> (its --log-level that, then
// PLATFORMAPI_LOG_LEVEL) and no other global flag's variable; the global
// flags and serve's read PLATFORMAPI_<FLAG> (and envAliases); eval's
// --token, --base-url and --model read PLATFORMAPI_EVAL_<FLAG>; other
// commands' own flags read none.
func envNames(cmd *cobra.Command, f *pflag.Flag) []string {
	snake := snakeName(f.Name)
	global := cmd.Root().PersistentFlags().Lookup(f.Name) == f
	switch {
	case f.Name == "help" || f.Name == "version":
		return nil
	case cmd.Name() == "node-agent" && f.Name == "log-level":
		return []string{nodeAgentEnv + snake, envPrefix + snake}
	case cmd.Name() == "node-agent":
		if global {
			return nil
		}
		return []string{nodeAgentEnv + snake}
	case cmd.Name() == "eval" && evalEnvFlags[f.Name]:
		return []string{evalEnv + snake}
	case global || cmd.Name() == "serve":
		return append([]string{envPrefix + snake}, envAliases[f.Name]...)
	}
	return nil
}

// snakeName is a flag's name (without its dashes) as its variables spell
// it: ALLOWED_NETWORKS for allowed-networks.
func snakeName(flag string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_"))
}

// applyEnv sets every flag of cmd not given on the command line from the
// first of its environment variables (envNames) that is set, parsed as the
// flag would parse it: the flag wins over the environment, and a value
// that does not parse is refused naming its variable.
func applyEnv(cmd *cobra.Command, getenv func(string) string) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		for _, name := range envNames(cmd, f) {
			if v := getenv(name); v != "" {
				if e := cmd.Flags().Set(f.Name, v); e != nil {
					err = fmt.Errorf("%s=%q: %w", name, v, plainFlagError(e))
				}
				return
			}
		}
	})
	return err
}

// sayEnv appends the environment variables of cmd's own flags (and, on
// the root, of its global flags) to their usage, for --help, with the
// variables that go with the flag (flagDocs' Env) unless the usage names
// them already.
func sayEnv(cmd *cobra.Command) {
	say := func(scope string) func(f *pflag.Flag) {
		return func(f *pflag.Flag) {
			names := envNames(cmd, f)
			more := strings.ReplaceAll(flagDocs[scope+"--"+f.Name].Env, "`", "")
			if more != "" && !strings.Contains(f.Usage, strings.Fields(more)[0]) {
				names = append(names, "with "+more)
			}
			if len(names) > 0 {
				f.Usage += envSuffix(names)
			}
		}
	}
	cmd.LocalNonPersistentFlags().VisitAll(say(cmd.Name() + " "))
	cmd.PersistentFlags().VisitAll(say(""))
}

// envSuffix is what sayEnv appends to a usage.
func envSuffix(names []string) string { return " (env " + strings.Join(names, ", ") + ")" }

// levelFlag is a log level as a flag's value (info when not set): a value
// that is not debug, info, warn or error is refused as the flag, or its
// environment variable, is read, naming it.
type levelFlag struct{ slog.Level }

// Set implements pflag.Value.
func (l *levelFlag) Set(s string) error {
	var v slog.Level
	if err := v.UnmarshalText([]byte(s)); err != nil {
		return errors.New("want debug, info, warn or error")
	}
	l.Level = v
	return nil
}

// String implements pflag.Value: the level in lower case.
func (l *levelFlag) String() string { return strings.ToLower(l.Level.String()) }

// Type implements pflag.Value.
func (l *levelFlag) Type() string { return "level" }

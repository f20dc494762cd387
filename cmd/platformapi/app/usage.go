package app

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// strictUsage makes every command under root refuse a wrong command line
// in one line naming what is wrong: a group (portal, portal token, migrate
// …) refuses a word that is none of its sub-commands instead of printing
// its help and exiting 0; a wrong number of arguments names the command and
// the arguments it takes; a flag value that does not parse says what the
// flag wants instead of Go's strconv text.
func strictUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return plainFlagError(err) })
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		switch {
		case c == root: // cobra refuses an unknown command of the root itself
		case c.HasSubCommands() && !c.Runnable():
			c.Args, c.SuggestionsMinimumDistance = unknownSubcommand, 2
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		case c.Args != nil:
			c.Args = namedArgs(c.Args)
		}
	}
	walk(root)
}

// unknownSubcommand refuses any argument of a group command: a group is
// only a path to its sub-commands.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return errors.New(msg + "; see " + cmd.CommandPath() + " --help")
}

// namedArgs wraps a command's argument check so that its refusal names
// the command and what it takes (from its Use line) rather than counts.
func namedArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if check(cmd, args) == nil {
			return nil
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = strconv.Quote(a)
		}
		got := "none"
		if len(args) > 0 {
			got = strings.Join(quoted, " ")
		}
		want := strings.TrimSpace(strings.TrimPrefix(cmd.Use, cmd.Name()))
		want = strings.TrimSpace(strings.ReplaceAll(want, "[flags]", ""))
		if want == "" {
			return fmt.Errorf("%s takes no arguments, got %s", cmd.CommandPath(), got)
		}
		return fmt.Errorf("%s wants %s, got %s (usage: %s)", cmd.CommandPath(), want, got, cmd.UseLine())
	}
}

// plainFlagError rewrites a flag value that does not parse as what the
// flag wants ("want an integer"), naming the flag and the value; other
// errors are returned as they are.
func plainFlagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	want := ""
	var ne *strconv.NumError
	switch typ := f.Value.Type(); {
	case errors.As(ive.Unwrap(), &ne) && errors.Is(ne.Err, strconv.ErrRange):
		want = "out of range"
	case typ == "bool":
		want = "want true or false"
	case typ == "duration":
		want = "want a duration such as 30s, 5m or 1h30m"
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint"):
		want = "want an integer"
	case strings.HasPrefix(typ, "float"):
		want = "want a number"
	default:
		return err
	}
	return fmt.Errorf("invalid value %q for --%s: %s", ive.GetValue(), f.Name, want)
}

// globalFlagsTaken is the annotation of a command that takes, of the
// root's global flags, only those it lists (comma-separated): node-agent,
// which runs on a GPU node and reads no database, pepper or Redis.
const globalFlagsTaken = "platformapi/global-flags-taken"

// refuseForeignFlags refuses a global flag given to a command whose
// globalFlagsTaken does not list it, as cobra refuses an unknown flag: the
// command's --help does not offer it, so it is none of its flags.
func refuseForeignFlags(cmd *cobra.Command) error {
	taken, ok := cmd.Annotations[globalFlagsTaken]
	if !ok {
		return nil
	}
	var err error
	cmd.Root().PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if err == nil && f.Changed && !slices.Contains(strings.Split(taken, ","), f.Name) {
			err = fmt.Errorf("unknown flag: --%s (%s takes only its own flags and --%s; see %s --help)",
				f.Name, cmd.CommandPath(), strings.ReplaceAll(taken, ",", ", --"), cmd.CommandPath())
		}
	})
	return err
}

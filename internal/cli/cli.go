package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// ExitUsage is the exit status of a usage error, in every command.
const ExitUsage = 2

// Command is one command line: its name as users type it
// ("mrc-conform run") and where its output goes.
type Command struct {
	Name           string
	Stdout, Stderr io.Writer
}

// Parse parses args with fs; when interspersed, flags may follow the
// positional arguments (decode x.pcapng -V), as tshark users expect. It
// returns the positional arguments, or stop with the exit status to
// return: 0 after -h (fs.Usage printed on standard output), ExitUsage
// after a bad flag (one line and the hint on standard error). fs.Usage
// must print to fs.Output().
func (c Command) Parse(fs *flag.FlagSet, args []string, interspersed bool) (pos []string, stop bool, code int) {
	fs.SetOutput(io.Discard) // the flag package's own message and usage dump
	var err error
	if interspersed {
		pos, err = parseInterspersed(fs, args)
	} else if err = fs.Parse(args); err == nil {
		pos = fs.Args()
	}
	fs.SetOutput(c.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return nil, true, 0
	case err != nil:
		return nil, true, c.Usagef("%v", err)
	}
	return pos, false, 0
}

func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// Usagef reports a usage error: "NAME: MESSAGE" and the hint, on
// standard error. It returns ExitUsage.
func (c Command) Usagef(format string, a ...any) int {
	fmt.Fprintf(c.Stderr, "%s: %s\n%s\n", c.Name, fmt.Sprintf(format, a...), c.Hint())
	return ExitUsage
}

// Errorf reports a failure that is not a usage error ("NAME: MESSAGE",
// no hint) and returns code.
func (c Command) Errorf(code int, format string, a ...any) int {
	fmt.Fprintf(c.Stderr, "%s: %s\n", c.Name, fmt.Sprintf(format, a...))
	return code
}

// HelpOrVersion answers a first argument that asks for help (-h, -help,
// --help, help: usage on standard output) or for the version (version,
// -version, --version), as a command with subcommands takes them; it
// reports whether it did, and then the exit status is 0.
func (c Command) HelpOrVersion(arg, usage string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		io.WriteString(c.Stdout, usage)
	case "version", "-version", "--version":
		fmt.Fprintln(c.Stdout, Version(c.Name))
	default:
		return false
	}
	return true
}

// Hint is the line that follows a usage error.
func (c Command) Hint() string { return "see '" + c.Name + " -h'" }

// Version is the one line --version prints: the command, the main
// module's version (a tag such as v0.1.0 when built with go install
// MODULE@VERSION, else "(devel)"), extra facts the command adds (such as
// the report format's version), the VCS revision when the build recorded
// it, and the Go toolchain and platform.
func Version(name string, extra ...string) string {
	var b strings.Builder
	b.WriteString(name)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		b.WriteString(" (no build information)")
	} else {
		v := info.Main.Version
		if v == "" {
			v = "(devel)"
		}
		b.WriteString(" " + v)
	}
	for _, e := range extra {
		b.WriteString(", " + e)
	}
	if ok {
		var rev, when, dirty string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = " (modified)"
				}
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			fmt.Fprintf(&b, ", commit %s %s%s", rev, when, dirty)
		}
	}
	fmt.Fprintf(&b, ", %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// List is a repeatable flag whose values may also be comma-separated
// (--fault a,b --fault c); blanks are dropped.
type List []string

func (l *List) String() string { return strings.Join(*l, ",") }

// Set appends the comma-separated names in s.
func (l *List) Set(s string) error {
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l = append(*l, n)
		}
	}
	return nil
}

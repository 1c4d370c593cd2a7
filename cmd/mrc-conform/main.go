// Command mrc-conform is the MRC conformance toolkit: it decodes
// captures, lists requirements and cases, judges captures against the
// requirements and runs the active suite against a device.
//
// Usage:
//
//	mrc-conform <command> [flags] [args]
//
// Each subcommand lives in its own file and adds itself to the command
// table with register from an init function, so adding one touches
// nothing else.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/internal/cli"
)

// A command runs with its arguments (without the command name) and
// returns the process exit status: 0 success, 1 failure, 2 usage error.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a subcommand. It is called from init functions.
func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	if _, dup := commands[name]; dup {
		panic("mrc-conform: subcommand " + name + " registered twice")
	}
	commands[name] = command{summary: summary, run: run}
}

func main() { os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr)) }

// dispatch runs the subcommand named by args[0].
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout)
		return 0
	case "-version", "--version":
		return runVersion(nil, stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		return cli.Command{Name: "mrc-conform", Stdout: stdout, Stderr: stderr}.Usagef("unknown command %q", args[0])
	}
	return c.run(args[1:], stdout, stderr)
}

func init() {
	register("version", "print the version of mrc-conform and of its report format", runVersion)
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	cmd := cli.Command{Name: "mrc-conform version", Stdout: stdout, Stderr: stderr}
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: mrc-conform version\n\nPrints the module version (a tag, or (devel) for a build from a\nclone), the report format's version, the commit when recorded, and\nthe Go toolchain.")
	}
	pos, done, code := cmd.Parse(fs, args, false)
	if done {
		return code
	}
	if len(pos) > 0 {
		return cmd.Usagef("unexpected arguments %q", pos)
	}
	fmt.Fprintln(stdout, cli.Version("mrc-conform", "reports "+conformance.Version+" (schema "+conformance.SchemaVersion+")"))
	return 0
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: mrc-conform <command> [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-14s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun 'mrc-conform <command> -h' for a command's flags.\n")
	io.WriteString(w, b.String())
}

// newFlagSet is a subcommand's flag set whose -h prints usage, then the
// flags.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

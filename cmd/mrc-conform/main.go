// Command mrc-conform is the MRC conformance toolkit: it decodes
// captures, and (as other subcommands land) lists requirements, judges
// captures against them and runs conformance suites.
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
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
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
				return c.run([]string{"-h"}, stdout, stdout)
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mrc-conform: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
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

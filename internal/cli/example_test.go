package cli_test

import (
	"flag"
	"fmt"
	"os"

	"github.com/openmrc/mrc/internal/cli"
)

// A command parses its flags with Parse and reports a bad one as one
// line and a hint, never the whole usage.
func ExampleCommand_Parse() {
	cmd := cli.Command{Name: "mrc-demo run", Stdout: os.Stdout, Stderr: os.Stdout}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "usage: mrc-demo run [-n N]") }
	fs.Int("n", 1, "how many")
	if _, done, code := cmd.Parse(fs, []string{"-m", "2"}, false); done {
		fmt.Println("exit status", code)
	}
	if _, done, code := cmd.Parse(fs, []string{"-h"}, false); done {
		fmt.Println("exit status", code)
	}
	// Output:
	// mrc-demo run: flag provided but not defined: -m
	// see 'mrc-demo run -h'
	// exit status 2
	// usage: mrc-demo run [-n N]
	// exit status 0
}

// A List flag gathers repeated and comma-separated values in order.
func ExampleList() {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var faults cli.List
	fs.Var(&faults, "fault", "seed a known bug (repeatable)")
	if err := fs.Parse([]string{"--fault", "a, b", "--fault", "c,", "--fault", ""}); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("%q %s\n", []string(faults), faults.String())
	// Output:
	// ["a" "b" "c"] a,b,c
}

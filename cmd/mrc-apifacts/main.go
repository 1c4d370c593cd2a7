// Command mrc-apifacts keeps spec/api/facts.txt, the pinned facts of the
// OCP MRC API headers, in step with upstream.
//
//	mrc-apifacts extract [-rev REV] DIR   print the facts table of a checkout
//	mrc-apifacts diff [-rev REV] DIR      what changed since the pinned commit, and who cites it
//
// DIR is a checkout (or a bare clone, with -rev) of
// opencomputeproject/OCP-Multipath-Reliable-Connection. With -rev the
// headers are read from that commit with git; without it, from DIR's files.
// diff exits 1 when anything changed, listing for each changed fact the
// requirements, ambiguity entries and Go lines that mention it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openmrc/mrc/internal/cli"
	"github.com/openmrc/mrc/spec"
	"github.com/openmrc/mrc/spec/api"
)

// Repo is the upstream repository the facts come from.
const Repo = "opencomputeproject/OCP-Multipath-Reliable-Connection"

func main() { os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: mrc-apifacts extract|diff [-rev REV] DIR

  extract   print the facts table of a checkout of ` + Repo + `
  diff      what changed since the pinned commit, and who cites it (exit 1 when anything did)
  version   the version (also --version)

-rev REV reads the headers at that git revision of DIR (a clone, bare or not).
`

// runMain is main with the project's command-line behaviour (internal/cli):
// -h on standard output, exit 0; a usage error as one line and a hint.
func runMain(args []string, stdout, stderr io.Writer) int {
	cmd := cli.Command{Name: "mrc-apifacts", Stdout: stdout, Stderr: stderr}
	if len(args) > 0 && cmd.HelpOrVersion(args[0], usage) {
		return 0
	}
	code, err := run(args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case err != nil && (code == 2 || code == 0):
		return cmd.Usagef("%v", err)
	case err != nil:
		return cmd.Errorf(code, "%v", err)
	}
	return code
}

func run(args []string, w io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, errors.New("usage: mrc-apifacts extract|diff [-rev REV] DIR")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard) // runMain prints the error once, and the usage for -h
	rev := fs.String("rev", "", "read the headers at this git revision of DIR")
	if err := fs.Parse(args[1:]); err != nil {
		return 2, err
	}
	if fs.NArg() != 1 {
		return 2, errors.New("want one DIR")
	}
	dir := fs.Arg(0)
	t, err := read(dir, *rev)
	if err != nil {
		return 2, err
	}
	switch args[0] {
	case "extract":
		_, err := io.WriteString(w, t.Format())
		return 0, err
	case "diff":
		return diff(w, dir, t)
	}
	return 2, fmt.Errorf("unknown command %q", args[0])
}

// read extracts the facts table of DIR (at rev, when given).
func read(dir, rev string) (*api.Table, error) {
	files := map[string][]byte{}
	var names []string
	for _, h := range api.Headers {
		var b []byte
		var err error
		if rev != "" {
			b, err = exec.Command("git", "-C", dir, "show", rev+":"+h).Output()
		} else {
			b, err = os.ReadFile(filepath.Join(dir, h))
		}
		if err != nil {
			// An older commit may lack a header: it then has no facts.
			fmt.Fprintf(os.Stderr, "mrc-apifacts: %s not read (%v); taken as absent\n", h, err)
			continue
		}
		files[h] = b
		names = append(names, h)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no MRC API header in %s", dir)
	}
	facts, err := api.Extract(names, files)
	if err != nil {
		return nil, err
	}
	t := &api.Table{Repo: Repo, Commit: "unknown", Date: "unknown", Facts: facts}
	r := rev
	if r == "" {
		r = "HEAD"
	}
	if out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%H %cs", r).Output(); err == nil {
		if c, d, ok := strings.Cut(strings.TrimSpace(string(out)), " "); ok {
			t.Commit, t.Date = c, d
		}
	}
	return t, nil
}

func diff(w io.Writer, dir string, t *api.Table) (int, error) {
	pin, err := api.Pinned()
	if err != nil {
		return 2, err
	}
	fmt.Fprintf(w, "pinned %s (%s); upstream %s (%s)\n", short(pin.Commit), pin.Date, short(t.Commit), t.Date)
	if out, err := exec.Command("git", "-C", dir, "log", "--format=%h %cs %s", pin.Commit+".."+t.Commit, "--", "mrc.h", "mrc_ctl.h", "mrc_api_ver.h", "mrc_ctl_api_ver.h").Output(); err == nil && len(out) > 0 {
		fmt.Fprintf(w, "upstream commits touching the headers since the pin:\n%s", indent(string(out)))
	}
	changes := api.Diff(pin, t)
	if len(changes) == 0 {
		fmt.Fprintln(w, "no fact changed")
		return 0, nil
	}
	root, err := spec.FindModuleRoot(".")
	if err != nil {
		return 2, err
	}
	c, err := api.NewCiter(root)
	if err != nil {
		return 2, err
	}
	fmt.Fprintf(w, "%d facts changed:\n", len(changes))
	for _, ch := range changes {
		fmt.Fprintln(w, ch)
		reqs, code := c.Citations(ch.Fact())
		if len(reqs) > 0 {
			fmt.Fprintf(w, "\tspec: %s\n", strings.Join(reqs, " "))
		}
		if len(code) > 0 {
			fmt.Fprintf(w, "\tcode: %s\n", strings.Join(code, " "))
		}
	}
	fmt.Fprintln(w, "after updating what cites them: mrc-apifacts extract DIR > spec/api/facts.txt")
	return 1, nil
}

func short(h string) string { return h[:min(len(h), 7)] }

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t") + "\n"
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHelpEverywhere: -h, -help and --help, on mrc-conform and every
// subcommand, and help CMD, print the usage on standard output, nothing
// on standard error, and exit 0.
func TestHelpEverywhere(t *testing.T) {
	var lines [][]string
	for _, h := range []string{"-h", "-help", "--help", "help"} {
		lines = append(lines, []string{h})
	}
	for name := range commands {
		lines = append(lines, []string{name, "-h"}, []string{name, "--help"}, []string{"help", name})
	}
	for _, args := range lines {
		out, errs, code := run(t, args...)
		if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: mrc-conform") {
			t.Errorf("%q: exit %d, stderr %q, stdout starts %.40q; want 0, nothing, the usage", args, code, errs, out)
		}
	}
}

// TestUsageErrorIsOneLineAndHint: a usage error is the error on one line
// and the hint on the next, on standard error, exit 2; no usage dump.
func TestUsageErrorIsOneLineAndHint(t *testing.T) {
	for _, c := range []struct {
		args  []string
		first string
	}{
		{[]string{"frob"}, `mrc-conform: unknown command "frob"`},
		{[]string{"run", "--bogus"}, "mrc-conform run: flag provided but not defined: -bogus"},
		{[]string{"run", "extra-arg"}, `mrc-conform run: unexpected arguments ["extra-arg"]`},
		{[]string{"run", "--format", "pdf"}, `mrc-conform run: unknown format "pdf"`},
		{[]string{"judge", "x.pcapng"}, "mrc-conform judge: --pics is required"},
		{[]string{"judge", "--pics", "default"}, "mrc-conform judge: want a capture file, several, or a directory of them"},
		{[]string{"judge", "x", "--bogus"}, "mrc-conform judge: flag provided but not defined: -bogus"},
		{[]string{"judge", "--pics", "default", "--jobs", "0", "../../conformance/testdata/good.pcapng"}, "mrc-conform judge: --jobs 0 (want 1 to 256)"},
		{[]string{"judge", "--pics", "default", "--jobs", "257", "../../conformance/testdata/good.pcapng"}, "mrc-conform judge: --jobs 257 (want 1 to 256)"},
		{[]string{"judge", "--pics", "default", "--reorder", "-1", "../../conformance/testdata/good.pcapng"}, "mrc-conform judge: --reorder -1 (want 0 to 65536)"},
		{[]string{"judge", "--pics", "default", "--reorder", "65537", "../../conformance/testdata/good.pcapng"}, "mrc-conform judge: --reorder 65537 (want 0 to 65536)"},
		{[]string{"decode"}, "mrc-conform decode: no capture file given"},
		{[]string{"decode", "x", "--format", "xml"}, `mrc-conform decode: unknown format "xml"`},
		{[]string{"requirements", "extra"}, `mrc-conform requirements: unexpected argument "extra"`},
		{[]string{"version", "extra"}, `mrc-conform version: unexpected arguments ["extra"]`},
	} {
		out, errs, code := run(t, c.args...)
		name, _, _ := strings.Cut(c.first, ":")
		want := "\nsee '" + name + " -h'\n"
		if code != 2 || out != "" || !strings.HasPrefix(errs, c.first) || strings.Count(errs, "\n") != 2 || !strings.HasSuffix(errs, want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, %q then %q", c.args, code, out, errs, c.first, strings.TrimSpace(want))
		}
	}
}

// TestNotACaptureExitsTwo: decode and judge agree, as tshark does: a
// missing file, a directory or a file of another format is exit 2, with
// one line that names the file once.
func TestNotACaptureExitsTwo(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("# not a capture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pcapng")
	for _, c := range []struct{ file, what string }{
		{missing, "no such file or directory"},
		{dir, "is a directory"},
		{text, "not a pcap, pcapng or gzip file"},
	} {
		for _, args := range [][]string{{"decode", c.file}, {"judge", c.file, "--pics", "default"}} {
			out, errs, code := run(t, args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.what) {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line saying %q", args, code, out, errs, c.what)
			}
			if n := strings.Count(errs, c.file); n != 1 {
				t.Errorf("%q: stderr %q names the file %d times, want once", args, errs, n)
			}
			if strings.Contains(errs, "conformance:") {
				t.Errorf("%q: stderr %q: the package name is not the user's business", args, errs)
			}
		}
	}
}

// TestVersion: version and --version print one line on standard output,
// from the build information, with the report format's version.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		out, errs, code := run(t, args...)
		if code != 0 || errs != "" || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "mrc-conform ") ||
			!strings.Contains(out, "reports 0.") || !strings.Contains(out, " go1.") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if out, _, _ := run(t, "-h"); !slices.Contains(strings.Fields(out), "version") {
		t.Errorf("usage does not list the version command:\n%s", out)
	}
}

// TestErrorNamesFileOnce: a PICS or deviations file that cannot be read
// or parsed is one error line naming the file once, without the
// package's name.
func TestErrorNamesFileOnce(t *testing.T) {
	dir := t.TempDir()
	missing, text := filepath.Join(dir, "missing.json"), filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("# not JSON\nnot a deviation line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := ctd + "good.pcapng"
	for _, c := range []struct {
		args []string
		file string
	}{
		{[]string{"judge", good, "--pics", missing}, missing},
		{[]string{"judge", good, "--pics", text}, text},
		{[]string{"judge", good, "--pics", "default", "--deviations", missing}, missing},
		{[]string{"judge", good, "--pics", "default", "--deviations", text}, text},
		{[]string{"run", "--pics", missing}, missing},
	} {
		_, errs, code := run(t, c.args...)
		if code != 2 || strings.Count(errs, "\n") != 1 || strings.Count(errs, c.file) != 1 || strings.Contains(errs, "conformance:") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line naming %s once", c.args, code, errs, c.file)
		}
	}
}

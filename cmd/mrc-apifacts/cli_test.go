package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandLine: -h prints the usage on standard output and exits 0;
// --version prints one line; a usage error is one line and a hint on
// standard error, exit 2.
func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args  []string
		code  int
		first string // of stdout when code is 0, else of stderr
	}{
		{[]string{"-h"}, 0, "usage: mrc-apifacts"},
		{[]string{"extract", "-h"}, 0, "usage: mrc-apifacts"},
		{[]string{"--version"}, 0, "mrc-apifacts "},
		{nil, 2, "mrc-apifacts: usage: mrc-apifacts"},
		{[]string{"extract", "--bogus", "x"}, 2, "mrc-apifacts: flag provided but not defined: -bogus"},
	} {
		var o, e bytes.Buffer
		code := runMain(c.args, &o, &e)
		got, other := e.String(), o.String()
		if c.code == 0 {
			got, other = other, got
		}
		if code != c.code || !strings.HasPrefix(got, c.first) || other != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", c.args, code, o.String(), e.String(), c.code, c.first)
		}
		if c.code == 2 && !strings.HasSuffix(e.String(), "\nsee 'mrc-apifacts -h'\n") {
			t.Errorf("%q: stderr %q lacks the hint", c.args, e.String())
		}
	}
}

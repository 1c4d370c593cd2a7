// Package testenv lets tests that need an external tool (tshark, root,
// network namespaces, nftables) skip on a laptop without it, and fail
// instead when MRC_REQUIRE_TOOLS=1 — which the README's test command sets,
// so CI can never go green by skipping.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the variable that turns missing-tool skips into failures.
const RequireEnv = "MRC_REQUIRE_TOOLS"

// Required reports whether missing tools must fail tests.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Unavailable skips the test with reason, or fails it when tools are required.
func Unavailable(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s, and %s=1 forbids skipping", reason, RequireEnv)
	}
	t.Skipf("%s (set %s=1 to make this a failure)", reason, RequireEnv)
}

// LookPath returns the path of the named tool, or skips/fails the test.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(t, name+" is not installed")
	}
	return p
}

// Root skips/fails the test unless it runs as root.
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "this test needs root (raw sockets, network namespaces)")
	}
}

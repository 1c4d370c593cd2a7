package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeApt writes a command that fails as apt-get does while another
// process holds the lock, failures times, then succeeds.
func fakeApt(t *testing.T, failures int) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "fake-apt")
	script := `#!/usr/bin/env bash
n=$(cat "$0.count" 2>/dev/null || echo 0); echo $((n+1)) >"$0.count"
if [ "$n" -lt ` + strconv.Itoa(failures) + ` ]; then
	echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
	echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
	exit 100
fi
echo installed
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func runAptLocked(t *testing.T, limit string, cmd ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := exec.Command("bash", "-c", `. ./aptlock.sh; apt_locked "$@"`, "bash")
	c.Args = append(c.Args, cmd...)
	c.Env = append(os.Environ(), "MRC_APT_LOCK_WAIT="+limit, "MRC_APT_LOCK_STEP=1")
	var o, e strings.Builder
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestAptLockedWaitsAndSaysSo(t *testing.T) {
	out, errOut, code := runAptLocked(t, "30", fakeApt(t, 2))
	if code != 0 || out != "installed\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and the command's output after the lock frees", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "test.sh: the apt/dpkg lock is held by another process; waiting up to 30s") ||
		!strings.Contains(lines[1], "held by process 4242") {
		t.Errorf("stderr %q: want one announcement of the bounded wait and apt's line naming the holder", errOut)
	}
}

func TestAptLockedGivesUp(t *testing.T) {
	out, errOut, code := runAptLocked(t, "2", fakeApt(t, 9))
	if code != 100 || out != "" {
		t.Fatalf("exit %d, stdout %q; want apt's exit status 100 once the wait is over", code, out)
	}
	if !strings.Contains(errOut, "gave up after 2s waiting for the apt/dpkg lock") || !strings.Contains(errOut, "E: Unable to lock directory") {
		t.Errorf("stderr %q: want the give-up line and apt's own message", errOut)
	}
}

func TestAptLockedOtherFailureAtOnce(t *testing.T) {
	_, errOut, code := runAptLocked(t, "30", "bash", "-c", "echo 'E: Unable to locate package nosuch' >&2; exit 100")
	if code != 100 || strings.Contains(errOut, "waiting") || !strings.Contains(errOut, "Unable to locate package") {
		t.Errorf("exit %d, stderr %q: want an immediate failure with apt's message, no wait", code, errOut)
	}
}

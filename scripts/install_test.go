package scripts

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/openmrc/mrc/internal/testenv"
)

// TestInstallStatic: the commands build as the README's Install section
// builds them (CGO_ENABLED=0), and each is a static binary: no program
// interpreter, no shared library. A dependency that needs cgo fails the
// build; one that links a C library dynamically fails the check.
func TestInstallStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Unavailable(t, "the check reads ELF binaries; Install's claim is for Linux")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/...")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/...: %v\n%s", err, out)
	}
	bins, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(bins) < 3 {
		t.Fatalf("built %v (%v), want mrc-conform, mrc-peer, mrc-sim and the rest of cmd/", bins, err)
	}
	for _, b := range bins {
		if err := staticELF(b); err != nil {
			t.Errorf("%s: %v", filepath.Base(b), err)
		}
	}
}

// TestStaticELFFindsDynamic: staticELF rejects a dynamically linked
// program (the system's own ls, built against the C library).
func TestStaticELFFindsDynamic(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Unavailable(t, "the check reads ELF binaries: it needs Linux's ls")
	}
	ls := testenv.LookPath(t, "ls")
	if err := staticELF(ls); err == nil {
		t.Errorf("staticELF(%s) = nil, want the dynamic program reported", ls)
	}
}

// staticELF reports why the ELF binary at path is not static: a program
// interpreter (the dynamic loader) or a shared library it needs.
func staticELF(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("has a program interpreter (dynamically linked)")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	if len(libs) > 0 {
		return fmt.Errorf("needs shared libraries %v", libs)
	}
	return nil
}

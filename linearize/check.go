package linearize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is the outcome of a check.
type Verdict uint8

// Verdicts.
const (
	Linearizable Verdict = iota
	Violation
	Inconclusive // the checker ran out of time
)

func (v Verdict) String() string {
	switch v {
	case Linearizable:
		return "linearizable"
	case Violation:
		return "not linearizable"
	case Inconclusive:
		return "inconclusive (timeout)"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Result is one model's check of one history.
type Result struct {
	Model   string
	Verdict Verdict
	Ops     int
	Elapsed time.Duration
	info    porcupine.LinearizationInfo
	model   porcupine.Model
}

// ErrNotLinearizable is wrapped by Result.Err for a violation.
var ErrNotLinearizable = errors.New("linearize: history is not linearizable")

// ErrInconclusive is wrapped by Result.Err when the check timed out.
var ErrInconclusive = errors.New("linearize: check timed out")

// Err returns nil for a linearizable history.
func (r *Result) Err() error {
	switch r.Verdict {
	case Violation:
		return fmt.Errorf("%w: %s model, %d operations", ErrNotLinearizable, r.Model, r.Ops)
	case Inconclusive:
		return fmt.Errorf("%w: %s model, %d operations after %v", ErrInconclusive, r.Model, r.Ops, r.Elapsed)
	}
	return nil
}

// Check checks ops against model, giving up after timeout (0: none).
func Check(name string, model porcupine.Model, ops []porcupine.Operation, timeout time.Duration) Result {
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	r := Result{Model: name, Ops: len(ops), Elapsed: time.Since(start), info: info, model: model}
	switch res {
	case porcupine.Ok:
		r.Verdict = Linearizable
	case porcupine.Illegal:
		r.Verdict = Violation
	default:
		r.Verdict = Inconclusive
	}
	return r
}

// CheckHistory checks both models over h.
func CheckHistory(h *History, timeout time.Duration) (reg, fifo Result) {
	return Check("registers", Registers, h.Registers(), timeout), Check("fifo", FIFO, h.FIFO(), timeout)
}

// Visualize writes porcupine's interactive HTML view of the check (the
// longest linearizable prefixes and where they fail) to dir/name.html and
// returns the path.
func (r *Result) Visualize(dir, name string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(r.model, r.info, p); err != nil {
		return "", err
	}
	return p, nil
}

// TB is the part of testing.TB that Report uses.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	TempDir() string
}

// ArtifactDir is where test artifacts go: $MRC_ARTIFACTS if set, else a
// test temporary directory.
func ArtifactDir(t TB) string {
	if d := os.Getenv("MRC_ARTIFACTS"); d != "" {
		return d
	}
	return t.TempDir()
}

// Report writes the visualization of a violation as a test artifact and
// logs its path; it returns r.Err() (nil, a violation, or a timeout, which
// has nothing to show).
func Report(t TB, name string, r *Result) error {
	t.Helper()
	err := r.Err()
	if r.Verdict != Violation {
		return err
	}
	if p, verr := r.Visualize(ArtifactDir(t), name); verr == nil {
		t.Logf("%s: %v; porcupine visualization: %s", name, err, p)
	} else {
		t.Logf("%s: %v; visualization failed: %v", name, err, verr)
	}
	return err
}

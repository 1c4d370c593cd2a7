package conformance

import "fmt"

// Verdict is the outcome of one conformance case, in the vocabulary of ISO
// 9646 / TTCN-3 extended with Autobahn's NON-STRICT and the QUIC interop
// runner's NOT-SUPPORTED.
type Verdict uint8

// Verdicts, ordered so that a larger value is a worse outcome when the
// observations of one case are combined (see Worse).
const (
	// NotApplicable: the case needs a feature the PICS does not declare
	// (or declares absent), so it was not run.
	NotApplicable Verdict = iota
	// NotSupported: the PICS lists the case as unsupported by the
	// implementation, or the tester cannot run it in this mode.
	NotSupported
	// Pass: every observation met the requirement.
	Pass
	// Inconclusive: the tester could not create or observe the
	// preconditions (no trim in the capture, timestamps not trustworthy,
	// a PICS parameter missing, the capture ended too early).
	Inconclusive
	// NonStrict: a SHOULD-level requirement was not met.
	NonStrict
	// Fail: a MUST-level requirement was violated.
	Fail
	// Error: a fault of the tester itself; the case result is void.
	Error
)

var verdictNames = [...]string{
	NotApplicable: "NOT-APPLICABLE",
	NotSupported:  "NOT-SUPPORTED",
	Pass:          "PASS",
	Inconclusive:  "INCONCLUSIVE",
	NonStrict:     "NON-STRICT",
	Fail:          "FAIL",
	Error:         "ERROR",
}

// Verdicts lists every verdict in report order.
var Verdicts = []Verdict{Pass, Fail, NonStrict, Inconclusive, NotApplicable, NotSupported, Error}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// ParseVerdict is the inverse of String.
func ParseVerdict(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if n == s {
			return Verdict(i), nil
		}
	}
	return 0, fmt.Errorf("conformance: unknown verdict %q", s)
}

// Worse returns the worse of two verdicts: the one that decides a case
// when both were observed.
func Worse(a, b Verdict) Verdict {
	if b > a {
		return b
	}
	return a
}

// MarshalText encodes the verdict as its name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText decodes a verdict name.
func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := ParseVerdict(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

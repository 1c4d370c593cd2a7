package statemachine

import "math"

// Time is a point in synthetic time, in nanoseconds. The state machine never
// reads a clock: every input carries the caller's notion of now, so the same
// inputs give the same outputs (see doc.go).
type Time int64

// Never is the deadline reported when no timer is armed.
const Never Time = math.MaxInt64

// Common durations.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// MaxTimeout is the largest timeout attribute (1.024 µs × 2^24 ≈ 17.18 s).
const MaxTimeout = 24

// Timeout returns the base ACK timeout for attribute t: 1.024 µs × 2^t
// (LR-TMR-1).
// Values above MaxTimeout are clamped, so the result never overflows.
func Timeout(t uint8) Time {
	if t > MaxTimeout {
		t = MaxTimeout
	}
	return 1024 << t
}

// addSat returns a+b, saturating at Never.
func addSat(a, b Time) Time {
	if b > 0 && a > Never-b {
		return Never
	}
	return a + b
}

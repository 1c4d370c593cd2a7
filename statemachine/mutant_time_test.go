package statemachine

import "testing"

// TestAddSatSaturates: deadlines (probe rounds, reverse-path probes, the
// delayed SACK, an endpoint batch) are now + an interval that a caller may
// set to Never; the sum saturates at Never instead of wrapping into the
// past, and a zero or negative interval is added as it is (EV-PRB-1,
// RSP-SACK-5: a timer armed far away never fires early).
func TestAddSatSaturates(t *testing.T) {
	for _, c := range []struct{ a, b, want Time }{
		{5, 3, 8},
		{5, 0, 5},
		{5, -2, 3},
		{Never - 1, 1, Never},
		{Never - 1, 2, Never},
		{1, Never, Never},
		{Never, Never, Never},
		{0, Never, Never},
	} {
		if got := addSat(c.a, c.b); got != c.want {
			t.Errorf("addSat(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestTimeoutClamped: the timeout attribute's base timeout is 1.024 µs ×
// 2^t, clamped at t = MaxTimeout, so no attribute overflows it (LR-TMR-1).
func TestTimeoutClamped(t *testing.T) {
	if Timeout(0) != 1024 || Timeout(MaxTimeout) != 1024<<MaxTimeout || Timeout(MaxTimeout+1) != Timeout(MaxTimeout) ||
		Timeout(255) != Timeout(MaxTimeout) {
		t.Errorf("Timeout: 0 -> %d, %d -> %d, %d -> %d, 255 -> %d", Timeout(0), MaxTimeout, Timeout(MaxTimeout), MaxTimeout+1,
			Timeout(MaxTimeout+1), Timeout(255))
	}
}

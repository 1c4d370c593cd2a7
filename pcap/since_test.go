package pcap_test

import (
	"math"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// TestSinceIsSub: Since gives what time.Time.Sub gives, close
// together, across a second, and far enough apart that Sub saturates.
func TestSinceIsSub(t *testing.T) {
	base := time.Unix(1_700_000_000, 999_999_999)
	for _, d := range []time.Duration{0, 1, -1, time.Second, -time.Second + 1, 1<<62 + 12345, -(1 << 62), math.MaxInt64, math.MinInt64} {
		u := base.Add(d)
		if got, want := pcap.Since(u, base), u.Sub(base); got != want {
			t.Errorf("Since(base%+d) = %d, want %d", d, got, want)
		}
	}
	for _, secs := range []int64{1 << 40, -(1 << 40), 1<<32 - 1, -(1<<32 - 1)} {
		u := time.Unix(1_700_000_000+secs, 5)
		if got, want := pcap.Since(u, base), u.Sub(base); got != want {
			t.Errorf("Since(%d s later) = %d, want %d", secs, got, want)
		}
	}
}

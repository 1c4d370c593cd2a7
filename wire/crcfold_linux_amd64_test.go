//go:build !purego

package wire

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestFoldableAgreesWithKernel: what readCPU reads gives the answer the
// kernel's CPU flags (/proc/cpuinfo) give.
func TestFoldableAgreesWithKernel(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	has := func(f string) bool { return slices.Contains(flags, f) }
	can := has("avx2") && has("vpclmulqdq")
	if canFold != can || canFoldZMM != (can && has("avx512f")) {
		t.Errorf("canFold %v, canFoldZMM %v; /proc/cpuinfo: avx2 %v, vpclmulqdq %v, avx512f %v",
			canFold, canFoldZMM, has("avx2"), has("vpclmulqdq"), has("avx512f"))
	}
}

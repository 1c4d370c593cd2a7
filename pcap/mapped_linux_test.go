package pcap_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// TestReaderMappedDrops: a Reader keeps no more of a mapped file in the
// process's memory than dropStep behind where it reads, or behind what a
// retaining Reader was last told to release (measured as the mapping's
// resident size in /proc/self/smaps).
func TestReaderMappedDrops(t *testing.T) {
	const step = 256 << 10
	defer pcap.SetDropStep(step)()
	sizes := make([]int, 4000)
	for i := range sizes {
		sizes[i] = 1000
	}
	data, _ := patterned(t, sizes)
	path := writeTemp(t, data)
	for _, retain := range []bool{false, true} {
		r := mustOpenMapped(t, path)
		if retain {
			r.Retain()
		}
		var f pcap.Frame
		sum := 0
		for r.Next(&f) == nil {
			for _, b := range f.Data {
				sum += int(b)
			}
			if retain {
				r.Release(f.Offset)
			}
		}
		addr, n := r.Mapping()
		rss := mappingRSS(t, addr)
		if limit := 2*step + 64<<10; rss > limit {
			t.Errorf("retain %v: %d bytes of the %d-byte mapping resident, want at most %d", retain, rss, n, limit)
		}
	}
}

// mappingRSS returns the resident bytes of the mapping that starts at
// addr, from /proc/self/smaps.
func mappingRSS(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	start := fmt.Sprintf("%x-", addr)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, start) // a mapping's first line
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

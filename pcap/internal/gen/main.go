// Command gen writes the files of package pcap that are generated from
// the wire codec: the Wireshark dissector and the test corpus with its
// golden outputs. Run it with `go generate ./pcap`; the tests fail when a
// checked-in file differs from what it would write.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/openmrc/mrc/pcap/internal/corpus"
)

func main() {
	files, err := corpus.Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := os.MkdirAll(filepath.Dir(n), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(n, files[n], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

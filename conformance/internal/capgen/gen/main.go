// Command gen writes conformance/testdata from package capgen. Run it with
// `go generate ./conformance`; TestTestdataUpToDate fails when a checked-in
// file differs from what it would write.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/openmrc/mrc/conformance/internal/capgen"
)

func main() {
	dir := "testdata"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	files, err := capgen.Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), files[n], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

// Command gen writes the long-connection capture of package longconn:
//
//	go run ./conformance/internal/longconn/gen -frames 2000000 -o long.pcapng
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/openmrc/mrc/conformance/internal/longconn"
)

func main() {
	frames := flag.Int("frames", 2_000_000, "frames to write")
	out := flag.String("o", "", "output pcapng (required)")
	flag.Parse()
	if *out == "" || *frames < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := write(*out, *frames); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func write(path string, frames int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := longconn.Write(w, frames)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		fmt.Printf("%s: %d frames, one connection\n", path, n)
	}
	return err
}

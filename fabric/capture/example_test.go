package capture_test

import (
	"bytes"
	"fmt"

	"github.com/openmrc/mrc/fabric/capture"
)

// A capture scenario runs the simulator with one impairment, writes what
// the fabric carried as a pcapng and checks that the capture shows the
// impairment on the wire.
func Example() {
	s, ok := capture.Lookup("trim")
	if !ok {
		return
	}
	var file bytes.Buffer
	if err := s.Write(1, &file); err != nil {
		fmt.Println(err)
		return
	}
	e, err := s.Check(file.Bytes())
	fmt.Println(err, e.Malformed, e.Trimmed > 0)
	// Output: <nil> 0 true
}

package hugeheap_test

import (
	"fmt"

	"github.com/openmrc/mrc/internal/hugeheap"
)

// Importing the package put the start-up heap on huge pages. A program
// whose heap has grown since puts what the runtime mapped meanwhile there
// too: collapsing a range into a huge page keeps its bytes.
func ExampleNow() {
	tables := make([][]byte, 64)
	for i := range tables {
		tables[i] = make([]byte, 32<<10)
		tables[i][i] = byte(i + 1)
	}
	hugeheap.Now()
	kept := true
	for i, t := range tables {
		kept = kept && t[i] == byte(i+1)
	}
	fmt.Println(len(tables), "tables kept:", kept)
	// Output: 64 tables kept: true
}

package conformance

import (
	"bytes"
	"testing"
)

// TestJobsIdentical judges every golden capture under every PICS with 1,
// 2, 3 and 5 workers and requires byte-identical reports in every format.
func TestJobsIdentical(t *testing.T) {
	for _, c := range goldenCaptures(t) {
		for _, pics := range picsFor(c) {
			var want [][]byte
			for _, jobs := range []int{1, 2, 3, 5} {
				rep, err := judgeGoldenJobs(t, c, pics, jobs)
				if err != nil {
					break
				}
				var got [][]byte
				for _, f := range Formats {
					var b bytes.Buffer
					if err := rep.Write(&b, f); err != nil {
						t.Fatal(err)
					}
					// JUnit carries the time of the run.
					got = append(got, junitTime.ReplaceAll(b.Bytes(), nil))
				}
				if jobs == 1 {
					want = got
					continue
				}
				for i, f := range Formats {
					if !bytes.Equal(want[i], got[i]) {
						t.Errorf("%s under the %s PICS: %s report with %d workers differs from one worker's:\n%s", c, pics, f, jobs, firstDiff(want[i], got[i]))
						break
					}
				}
			}
		}
	}
}

var junitTime = regexpMust(` timestamp="[^"]*"`)

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < min(len(la), len(lb)); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return "line " + itoa(i+1) + ":\n  1: " + string(la[i]) + "\n  N: " + string(lb[i])
		}
	}
	return "lengths differ"
}

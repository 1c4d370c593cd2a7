package testenv

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// PeakRSSEnv names the file a test's child process writes its peak
// resident memory to (WritePeakRSS): a parent cannot read it from the
// child's rusage, which counts the parent's own memory shared before exec.
const PeakRSSEnv = "MRC_PEAK_RSS_FILE"

// WritePeakRSS writes this process's peak resident set size in KiB
// (VmHWM, Linux) to the file named by PeakRSSEnv, when it is set.
func WritePeakRSS() {
	name := os.Getenv(PeakRSSEnv)
	if name == "" {
		return
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			_ = os.WriteFile(name, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644)
			return
		}
	}
}

// PeakRSSMiB reads what WritePeakRSS wrote to name, in MiB; -1 when
// nothing was written.
func PeakRSSMiB(name string) float64 {
	b, err := os.ReadFile(name)
	if err != nil {
		return -1
	}
	kib, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return -1
	}
	return kib / 1024
}

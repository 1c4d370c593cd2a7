package conformance

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openmrc/mrc/fabric/capture"
	"github.com/openmrc/mrc/fabric/scenario"
	"github.com/openmrc/mrc/pcap"
)

// simCaptures caches the simulator captures the benchmarks judge: they are
// hundreds of megabytes, so they are written once per process to a
// temporary directory, never committed.
var simCaptures struct {
	sync.Mutex
	dir   string
	files map[string]string
}

// simCapture returns the path of `mrc-sim run -scenario name -seed 1
// -pcap FILE`, generating it on first use.
func simCapture(tb testing.TB, name string) string {
	tb.Helper()
	simCaptures.Lock()
	defer simCaptures.Unlock()
	if f, ok := simCaptures.files[name]; ok {
		return f
	}
	// A directory of captures made before (mrc-sim run -scenario NAME
	// -seed 1 -pcap DIR/NAME.pcapng) saves regenerating them.
	if d := os.Getenv("MRC_BENCH_CAPTURES"); d != "" {
		if _, err := os.Stat(filepath.Join(d, name+".pcapng")); err == nil {
			return filepath.Join(d, name+".pcapng")
		}
	}
	if simCaptures.dir == "" {
		d, err := os.MkdirTemp("", "mrc-judge-bench")
		if err != nil {
			tb.Fatal(err)
		}
		simCaptures.dir, simCaptures.files = d, map[string]string{}
	}
	s, ok := scenario.Lookup(name)
	if !ok {
		tb.Fatalf("no scenario %q", name)
	}
	path := filepath.Join(simCaptures.dir, name+".pcapng")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	sink := capture.NewPcapng(w)
	if _, err := s.Run(1, scenario.Options{Frames: sink}); err != nil {
		tb.Fatal(err)
	}
	if err := sink.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	simCaptures.files[name] = path
	return path
}

// BenchmarkJudge judges the `loss` simulator capture (93,683 frames, one
// QP) with the default PICS, one pass (no enrichment). It reports frames
// per second of CPU on one worker; the target is ≥ 1 M (issue 12). It
// reads the capture copied, as JudgeFile does by default.
func BenchmarkJudge(b *testing.B) { benchJudge(b, pcap.Open) }

// BenchmarkJudgeMapped is BenchmarkJudge reading the capture mapped
// (Options.Mapped): the two in one run say which costs less on this host.
func BenchmarkJudgeMapped(b *testing.B) { benchJudge(b, pcap.OpenMapped) }

// benchJudge is BenchmarkJudge with the capture opened by open.
func benchJudge(b *testing.B, open func(string) (*pcap.Reader, error)) {
	path := simCapture(b, "loss")
	b.ReportAllocs()
	b.ResetTimer()
	frames := 0
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		r, err := open(path)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Judge(r, path, Options{})
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		frames += rep.Capture.Frames
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	// Per core: the process's CPU time (user + system, every thread, GC
	// included), which a loaded machine does not inflate as it does wall
	// time.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(frames)/cpu.Seconds(), "frames/cpu-s")
	}
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkJudgeJobs judges the `incast` simulator capture (eight node
// pairs, one with 46 % of the frames) with 1 and 2 workers; compare the
// two in one run: wall time per op, and the CPU each uses. On a loaded
// machine the wall time says how much CPU the run was given, so
// threads=2 judges with 2 workers again, each goroutine locked to its
// thread, and reports from each thread's CPU time (the reader's and each
// shard's) the wall time two free cores would take at best: the larger of
// half the threads' CPU and the busiest thread's (crit-ms/op), to set
// against one worker's cpu-ms/op. Its own wall time is not the judge's:
// the locked threads hand batches over through the kernel's scheduler.
func BenchmarkJudgeJobs(b *testing.B) {
	path := simCapture(b, "incast")
	for _, run := range []struct {
		name      string
		jobs      int
		perThread bool
	}{{"jobs=1", 1, false}, {"jobs=2", 2, false}, {"threads=2", 2, true}} {
		b.Run(run.name, func(b *testing.B) { benchJudgeJobs(b, path, run.jobs, run.perThread) })
	}
}

// benchJudgeJobs judges path with jobs workers, and with perThread each
// goroutine locked to its thread, whose CPU time it reports.
func benchJudgeJobs(b *testing.B, path string, jobs int, perThread bool) {
	frames := 0
	var mu sync.Mutex
	var threads []time.Duration
	if perThread {
		shardHook = func() func() {
			runtime.LockOSThread()
			t0 := threadCPU()
			return func() {
				mu.Lock()
				threads = append(threads, threadCPU()-t0)
				mu.Unlock()
				runtime.UnlockOSThread()
			}
		}
		defer func() { shardHook = nil }()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	var crit, readers, busiest, spread time.Duration
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		threads = threads[:0]
		r, err := pcap.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		t0 := threadCPU()
		rep, err := Judge(r, path, Options{Jobs: jobs})
		reader := threadCPU() - t0
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		frames += rep.Capture.Frames
		sum, most, work := reader, reader, time.Duration(0)
		for _, t := range threads {
			sum += t
			most = max(most, t)
			work = max(work, t)
		}
		crit += max(sum/2, most)
		readers += reader
		busiest += work
		spread += sum
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(frames)/cpu.Seconds(), "frames/cpu-s")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	}
	if perThread {
		b.ReportMetric(float64(crit.Milliseconds())/float64(b.N), "crit-ms/op")
		b.ReportMetric(float64(readers.Milliseconds())/float64(b.N), "reader-ms/op")
		b.ReportMetric(float64(busiest.Milliseconds())/float64(b.N), "worker-ms/op")
		b.ReportMetric(float64(spread.Milliseconds())/float64(b.N), "threads-ms/op")
	}
}

// threadCPU is the calling thread's CPU time so far (Linux).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkShardOf is the reader's per-frame cost of sharding a parallel
// judgement (sharder.of), over the first 4096 frames of the `incast`
// capture (eight node pairs). It keeps each frame's first 128 bytes only,
// packed, so that the frames are in cache as the reader's are (it has just
// read each one's block header).
func BenchmarkShardOf(b *testing.B) {
	r, err := pcap.Open(simCapture(b, "incast"))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var frames [][]byte
	var f pcap.Frame
	for len(frames) < 1<<12 && r.Next(&f) == nil {
		frames = append(frames, slices.Clone(f.Data[:min(len(f.Data), 128)]))
	}
	s := sharder{p: DefaultPICS(), shards: 2 * shardsPerWorker, assigned: map[uint64]int{}}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		f := frames[i%len(frames)]
		n += s.of(f, len(f))
	}
	if n < 0 {
		b.Fatal(n)
	}
}

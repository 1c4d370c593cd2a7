package conformance

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
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

// TestBatchHelpedDecode: frames a helping worker decoded (batch.help, from
// the back of a batch) and frames its own worker decodes, with their ICRCs
// computed ahead (every other frame) or not, are judged alike: an engine
// fed batches that helpers took all or half of reports what an engine
// judging the frames one by one does, on a
// capture whose ICRCs are good and on one with bad ones (WIRE-ICRC-1).
func TestBatchHelpedDecode(t *testing.T) {
	for _, c := range []string{"../pcap/testdata/scenarios/perplane-loss.pcapng", "testdata/fault-bad-icrc.pcapng"} {
		batchHelped(t, c)
	}
}

func batchHelped(t *testing.T, capture string) {
	p := referencePICS(t)
	r, err := pcap.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Retain() {
		t.Fatal("the capture file does not retain")
	}
	var frames []pcap.Frame
	var ifs []*pcap.Interface
	var table ifaceTable
	for {
		var f pcap.Frame
		if err := r.Next(&f); err != nil {
			break
		}
		frames = append(frames, f)
		ifs = append(ifs, table.get(r, f.Interface, f.Timestamp.UnixNano()))
	}
	report := func(e *engine) string {
		e.finish()
		var b bytes.Buffer
		if err := e.report(&CaptureInfo{}, nil, testDay).Write(&b, FormatJSON); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one := newEngine(p)
	for i := range frames {
		one.frame(&frames[i], ifs[i])
	}
	want := report(one)
	for _, helped := range []int{batchFrames, batchFrames / 2} {
		e := newEngine(p)
		d := pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}
		b := new(batch)
		var seq uint64
		var ps wire.PreScratch
		ahead := 0
		for i := 0; i < len(frames); {
			for ; b.n < batchFrames && i < len(frames); i++ {
				// Every other frame with its ICRC computed ahead, as the
				// reader computes it (parallel.computeAhead).
				var pre wire.PreICRC
				if i%2 == 0 {
					if pre = p.Codec().PreICRC(frames[i].Data, &ps); pre.Computed() {
						ahead++
					}
				}
				b.add(&frames[i], ifs[i], i+1, true, pre)
			}
			seq++
			b.seq = seq
			b.gen.Store(seq)
			b.live.Store(true)
			b.offered, b.recs = true, new(records) // as parallel.send offers it
			// The worker has claimed the first frames before the helper
			// comes.
			for k := 0; k < b.n-min(helped, b.n); k++ {
				b.state[k].Store(frameClaimed)
			}
			b.help(seq, &d)
			computed := 0
			for k := 0; k < b.n; k++ {
				if b.state[k].Load() == frameDecoded {
					computed++
				}
				if b.state[k].Load() == frameClaimed {
					b.state[k].Store(frameFree) // the worker's own, as judge finds them
				}
			}
			if computed != min(helped, b.n) {
				t.Fatalf("%s: the helper took %d frames of %d, want %d", capture, computed, b.n, min(helped, b.n))
			}
			b.judge(e)
			if b.offered {
				t.Fatalf("%s: after judging, the batch is still marked offered: not ready for reuse", capture)
			}
			for k := range b.state {
				if st := b.state[k].Load(); st != frameFree {
					t.Fatalf("%s: after judging, frame %d of the batch is in state %d: not ready for reuse", capture, k, st)
				}
			}
		}
		if got := report(e); got != want {
			t.Errorf("%s: helped %d frames per batch: the report differs:\n%s", capture, helped, firstDiff([]byte(want), []byte(got)))
		}
		if ahead < len(frames)/4 {
			t.Errorf("%s: %d of %d frames had an ICRC computed ahead", capture, ahead, len(frames))
		}
	}
}

// TestSendOffersHelpWhenBehind: the reader offers a batch to idle workers
// only when the batch's worker is behind (its queue is full and the reader
// waits for it); a worker keeping up decodes its own frames, on the core
// that will judge them.
func TestSendOffersHelpWhenBehind(t *testing.T) {
	j := &parallel{chans: []chan *batch{make(chan *batch, 1)}, help: make(chan helpMsg, 4), pending: make([]*batch, 1)}
	j.pending[0] = new(batch)
	first := j.pending[0]
	j.send(0) // room in the queue
	if n := len(j.help); n != 0 || first.offered || first.recs != nil {
		t.Fatalf("a batch sent to a worker keeping up was offered for help (%d offers, marked offered: %v, records taken: %v)", n, first.offered, first.recs != nil)
	}
	b := new(batch)
	j.pending[0] = b
	sent := make(chan struct{})
	go func() { j.send(0); close(sent) }() // the queue is full: waits
	deadline := time.Now().Add(10 * time.Second)
	for len(j.help) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if len(j.help) != 1 {
		t.Fatal("a batch sent to a worker behind was not offered for help")
	}
	if h := <-j.help; h.b != b || h.seq != 2 || !b.live.Load() || b.gen.Load() != 2 || !b.offered || b.recs == nil {
		t.Errorf("offer: batch %p seq %d live %v gen %d offered %v records %v; want %p seq 2, live, gen 2, offered, with records for its helpers", h.b, h.seq, b.live.Load(), b.gen.Load(), b.offered, b.recs != nil, b)
	}
	<-j.chans[0] // the worker takes the first batch
	<-sent
	if got := <-j.chans[0]; got != b {
		t.Error("the batch offered was not then queued for its worker")
	}
}

// TestWorkerReturnsRecords: a shard gives an offered batch's decode
// records back to the pool once it has judged the batch, and the next
// offer takes them, so that the records in use stay as many as the
// batches offered at once.
func TestWorkerReturnsRecords(t *testing.T) {
	j := &parallel{recs: make(chan *records, 4), free: make(chan *batch, 4), help: make(chan helpMsg, 4), slots: make(chan struct{}, 1)}
	b := new(batch)
	r := new(records)
	b.seq, b.offered, b.recs = 1, true, r
	b.gen.Store(1)
	b.live.Store(true)
	in := make(chan *batch, 1)
	in <- b
	close(in)
	j.wg.Add(1)
	j.work(newEngine(DefaultPICS()), in, new(atomic.Bool))
	if b.recs != nil || len(j.recs) != 1 {
		t.Fatalf("after judging an offered batch: its records kept %v, %d in the pool; want none kept, 1 in the pool", b.recs != nil, len(j.recs))
	}
	if got := reuse(j.recs); got != r {
		t.Error("the next offer did not take the pooled records")
	}
	if b.done.Load() != 1 || len(j.free) != 1 {
		t.Errorf("the batch is not marked done (%d) or not back for reuse (%d free)", b.done.Load(), len(j.free))
	}
}

// TestJobsBoundShardsJudging: a parallel judgement with Jobs workers runs
// shardsPerWorker times as many shards, and at most Jobs of them judge at
// once, whichever shards have batches.
func TestJobsBoundShardsJudging(t *testing.T) {
	r := openLoss(t)
	const jobs = 2
	var mu sync.Mutex
	judging, most := 0, 0
	batchHook = func(int) {
		mu.Lock()
		judging++
		most = max(most, judging)
		mu.Unlock()
		// Long enough for every shard with a batch to start one, were
		// nothing holding them back.
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		judging--
		mu.Unlock()
	}
	defer func() { batchHook = nil }()
	j := startParallel(r, Options{}, DefaultPICS(), jobs)
	if len(j.shards) != jobs*shardsPerWorker {
		t.Fatalf("%d shards for %d workers; want %d", len(j.shards), jobs, jobs*shardsPerWorker)
	}
	batches := sendEachShard(j)
	j.shutdown()
	for i, b := range batches {
		if b.done.Load() != b.seq {
			t.Errorf("shard %d did not judge its batch", i)
		}
	}
	if most != jobs {
		t.Errorf("%d shards judged at once with %d workers; want %d", most, jobs, jobs)
	}
}

// TestShardFaultFreesSlot: a shard that fails while judging gives its
// worker's slot back, so that the other shards judge their batches and the
// judgement ends with the failure, rather than waiting for a slot forever.
func TestShardFaultFreesSlot(t *testing.T) {
	r := openLoss(t)
	const jobs = 2
	var mu sync.Mutex
	calls := 0
	batchHook = func(int) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= jobs {
			panic("planted fault")
		}
	}
	defer func() { batchHook = nil }()
	j := startParallel(r, Options{}, DefaultPICS(), jobs)
	sendEachShard(j)
	ended := make(chan struct{})
	go func() {
		j.shutdown()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the judgement did not end after two shards failed holding both workers' slots")
	}
	if !j.faulted() {
		t.Error("the shards' failure was not reported")
	}
	if calls != len(j.shards) {
		t.Errorf("%d of %d shards started judging their batch", calls, len(j.shards))
	}
}

// TestFeedIdleShard: a shard with nothing to judge, while a worker is
// free, gets its batch once feedFrames frames are in it rather than once
// it is full, as at the start of a capture.
func TestFeedIdleShard(t *testing.T) {
	r := openLoss(t)
	var mu sync.Mutex
	var sizes []int
	batchHook = func(n int) {
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
	}
	defer func() { batchHook = nil }()
	j := startParallel(r, Options{}, DefaultPICS(), 2)
	var ifaces ifaceTable
	var f pcap.Frame
	for r.Next(&f) == nil {
		j.emit(&f, ifaces.get(r, f.Interface, f.Timestamp.UnixNano()))
	}
	j.shutdown()
	if len(sizes) == 0 || sizes[0] != feedFrames {
		t.Errorf("batch sizes %v: the first went with %d frames to an idle shard; want %d", sizes, sizes[0], feedFrames)
	}
}

// openLoss opens the simulator's small loss scenario capture (one node
// pair) for the duration of the test.
func openLoss(t *testing.T) *pcap.Reader {
	t.Helper()
	r, err := pcap.Open(filepath.Join("..", "pcap", "testdata", "scenarios", "loss.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// sendEachShard sends every shard of j an empty batch, numbered as the
// reader numbers them, and returns the batches.
func sendEachShard(j *parallel) []*batch {
	var batches []*batch
	for w := range j.shards {
		j.seq++
		b := &batch{seq: j.seq}
		batches = append(batches, b)
		j.chans[w] <- b
	}
	return batches
}

// TestJobsBounded: more than MaxJobs workers is an *OptionsError naming
// the jobs, from Judge and JudgeFile, before any shard starts.
func TestJobsBounded(t *testing.T) {
	var oe *OptionsError
	if _, err := JudgeFile("testdata/good.pcapng", Options{Jobs: MaxJobs + 1}); !errors.As(err, &oe) || !strings.Contains(oe.Msg, "jobs") {
		t.Errorf("JudgeFile, %d jobs: %v; want an *OptionsError naming the jobs", MaxJobs+1, err)
	}
	if _, err := Judge(openLoss(t), "loss", Options{Jobs: MaxJobs + 1}); !errors.As(err, &oe) || !strings.Contains(oe.Msg, "jobs") {
		t.Errorf("Judge, %d jobs: %v; want an *OptionsError naming the jobs", MaxJobs+1, err)
	}
	if _, err := Judge(openLoss(t), "loss", Options{Jobs: MaxJobs}); err != nil {
		t.Errorf("Judge, %d jobs: %v", MaxJobs, err)
	}
}

// TestSectionPlacedAfterEarlierFrames (issue 12: the report is the same
// for any number of workers): what a later pcapng section's first frames
// say about the planes (parallel.place once frames were emitted) reaches
// each shard in its queue, after the frames emitted before it, and is
// taken as the frame then reached, as one engine takes it. Before, the
// reader placed the shards' engines itself while they judged (a data race
// go test -race reported in TestSameNamedInterfacesTwoHosts), so a shard
// took the section's word before its earlier frames.
func TestSectionPlacedAfterEarlierFrames(t *testing.T) {
	r := openLoss(t)
	release := make(chan struct{})
	batchHook = func(int) { <-release }
	defer func() { batchHook = nil }()
	j := startParallel(r, Options{}, DefaultPICS(), 1)
	j.idx = 7 // frames emitted, and maybe queued, before the new section
	j.place(&planeLearning{notes: []string{"the second section's planes"}})
	for w, e := range j.shards {
		if len(e.notes) != 0 {
			t.Errorf("shard %d placed by the reader before judging its queue: notes %q", w, e.notes)
		}
	}
	close(release)
	j.shutdown()
	for w, e := range j.shards {
		if len(e.notes) != 1 || e.noteOrd[0]>>24 != 7 {
			t.Errorf("shard %d: notes %q at %x, want the section's once, as frame 7's", w, e.notes, e.noteOrd)
		}
	}
}

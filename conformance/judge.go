package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/openmrc/mrc/pcap"
)

// Options configure a passive judgement.
type Options struct {
	// PICS declares the implementation's features and parameters; nil
	// means DefaultPICS.
	PICS *PICS
	// Deviations are accepted failures; nil means none.
	Deviations *Deviations
	// Today is the date deviations expire against; zero means now (UTC).
	Today time.Time
	// Progress, when set, is called every ProgressEvery frames with the
	// number of frames judged so far.
	Progress func(frames int)
	// Annotate, when set, receives a pcapng copy of the capture whose
	// frames carry the verdicts as packet comments (JudgeFile only).
	Annotate io.Writer
	// CaptureLocation, when set, overrides the PICS's capture.location:
	// LocationDUT when the capture was taken at the DUT's own interface,
	// LocationRemote when it was not (a tap on the path, the peer's or
	// the tester's side). Away from the DUT, findings that rest on a
	// packet not seen are INCONCLUSIVE.
	CaptureLocation CaptureLocation
	// CaptureSHA256 makes JudgeFile put the capture file's SHA-256 in the
	// report (Capture.SHA256). It reads the file once more, at about the
	// CPU cost of judging it, so it is asked for, not done by default.
	CaptureSHA256 bool
	// Mapped makes JudgeFile read the capture file mapped
	// (pcap.OpenMapped) rather than copied in chunks (pcap.Open). Which
	// costs less CPU depends on the host's paging, not on the capture: on
	// a virtual machine with shadow paging the first touch of each mapped
	// page traps (BenchmarkJudge and BenchmarkJudgeMapped compare the two
	// on a host; the README's Performance section has this run's). The
	// report is the same either way.
	Mapped bool
	// marks, set by JudgeFile, remembers places in the capture for its
	// second pass.
	marks *marks
	// reopen, set by JudgeFile, opens the capture again from its start:
	// a parallel judgement that reached a bound over all connections is
	// made again by one worker (Jobs).
	reopen func() (*pcap.Reader, error)
	// Jobs is the number of workers judging the capture's connections in
	// parallel, sharded by node pair (shardsPerWorker shards per worker,
	// at most Jobs of them judging at once); 0 or 1 judges on the calling
	// goroutine. The report is the same for any number, with JudgeFile:
	// the shards keep their state apart, so a capture that reaches a
	// bound over all connections (MaxFlows, MaxFlowsPerPoint, MaxNodes,
	// MaxPoints, MaxEntries) in any of them, or that one engine would
	// reach, is judged again by one worker. Judge, reading its capture
	// once, cannot, and its report then notes that it may differ.
	Jobs int
	// Reorder is how many frames the judge holds back to put the frames
	// of several interfaces in timestamp order, at most MaxReorderLimit;
	// memory grows with it (the frames held). 0 means MaxReorder, and then
	// a capture file JudgeFile reads whose frames come later than that is
	// judged again holding back as many as its latest frame needs (at most
	// MaxReorderLimit, and as many as reorderBudget bytes hold), with a
	// capture note.
	Reorder int
}

// MaxJobs bounds Options.Jobs: each worker starts shardsPerWorker shards,
// each a goroutine with an engine of its own (about 20 KB before it sees
// a frame).
const MaxJobs = 256

// check reports why opts cannot be used, if they cannot.
func (opts *Options) check() error {
	if !opts.CaptureLocation.Valid() {
		return &OptionsError{fmt.Sprintf("capture location %q (want dut or remote)", opts.CaptureLocation)}
	}
	if opts.Jobs > MaxJobs {
		return &OptionsError{fmt.Sprintf("%d jobs (want at most %d)", opts.Jobs, MaxJobs)}
	}
	if opts.Reorder < 0 || opts.Reorder > MaxReorderLimit {
		return &OptionsError{fmt.Sprintf("reorder window of %d frames (want 0 to %d)", opts.Reorder, MaxReorderLimit)}
	}
	return nil
}

// OptionsError reports unusable Options.
type OptionsError struct{ Msg string }

func (e *OptionsError) Error() string { return "conformance: options: " + e.Msg }

// ProgressEvery is how often Options.Progress is called, in frames.
const ProgressEvery = 1 << 16

// CaptureError reports a capture that cannot be judged: not a capture
// file, unreadable, or truncated or corrupt part-way (Err is then a
// *pcap.FormatError with the offset of the bad block).
type CaptureError struct {
	File string
	Err  error
}

// Error names the file once: errors from opening it already do.
func (e *CaptureError) Error() string {
	msg := e.Err.Error()
	if strings.Contains(msg, e.File) {
		return msg
	}
	return e.File + ": " + msg
}

func (e *CaptureError) Unwrap() error { return e.Err }

// InternalError is a fault of the judge itself (a bug), with the stack
// where it happened. The report is void.
type InternalError struct {
	Value any
	Stack string
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("conformance: internal error: %v\n%s", e.Value, e.Stack)
}

// panicError is the error of a recovered panic: a fault of the judge.
func panicError(v any) error {
	if err := pcap.FaultError(v); err != nil {
		return err
	}
	return &InternalError{Value: v, Stack: string(debug.Stack())}
}

// captureFault returns err, panicError's, as a CaptureError of the file
// name when it is a mapped file's fault.
func captureFault(name string, err error) error {
	if errors.Is(err, pcap.ErrFileChanged) {
		return &CaptureError{File: name, Err: err}
	}
	return err
}

func (o *Options) resolve() (*PICS, time.Time) {
	p := o.PICS
	if p == nil {
		p = DefaultPICS()
	}
	today := o.Today
	if today.IsZero() {
		today = time.Now().UTC()
	}
	return p, today
}

// Judge reads a capture from r once and judges every passive case. name
// is the capture's name in the report. Frames referenced by the evidence
// carry no decode summary (JudgeFile adds them by reading the file twice).
func Judge(r *pcap.Reader, name string, opts Options) (rep *Report, err error) {
	p, today := opts.resolve()
	if err := opts.check(); err != nil {
		return nil, err
	}
	if err := ChecksErr(); err != nil {
		return nil, err
	}
	// A mapped capture file cut short faults where it is read: a panic
	// that names the file as changed (pcap.OpenMapped).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			rep, err = nil, captureFault(name, panicError(v))
		}
	}()
	info := &CaptureInfo{File: name, Format: r.Format().String(), Interfaces: []Interface{}, PointNodes: []PointNode{}, Notes: []string{}}
	e, again, err := judgeEngine(r, name, opts, p)
	if err != nil {
		return nil, err
	}
	if again != nil {
		defer again.Close()
		r = again
	}
	e.describeInterfaces(info, r)
	if e.snapped > 0 {
		e.discardNote(discardSnapped, e.snapped, "%d frames were truncated by the snap length and not judged")
	}
	if e.cutFrames > 0 {
		e.note("%d writes cut by the snap length after their headers were judged from their headers: their ICRC and pad bytes are not in the capture, so those are not checked, and what their responders did on the writes they had is judged only where a frame alone decides it", e.cutFrames)
	}
	e.finish()
	return e.report(info, opts.Deviations, today), nil
}

// judgeEngine judges the capture of r with opts.Jobs workers and returns
// the engine holding the verdicts, and, when a parallel judgement reached
// a bound over all connections and the capture was judged again by one
// worker, the reader it read again (which the caller closes).
func judgeEngine(r *pcap.Reader, name string, opts Options, p *PICS) (*engine, *pcap.Reader, error) {
	e, again, err := judgeWorkers(r, name, opts, p)
	if err != nil {
		return nil, nil, err
	}
	w := e.reorder.wider(opts)
	if w == 0 || opts.reopen == nil {
		return e, again, nil
	}
	r2, err := opts.reopen()
	if err != nil {
		closeReader(again)
		return nil, nil, &CaptureError{File: name, Err: err}
	}
	if opts.marks != nil {
		*opts.marks = marks{stride: opts.marks.stride}
	}
	first := e.reorder
	opts.Reorder = w
	e, again2, err := judgeWorkers(r2, name, opts, p)
	closeReader(again)
	if err != nil {
		r2.Close()
		return nil, nil, err
	}
	if again2 != nil {
		r2.Close()
		r2 = again2
	}
	e.note("%d frames came more than %d frames late (the latest needed a window of %d): the capture was judged again holding back up to %d frames", first.late, first.window, first.need, w)
	return e, r2, nil
}

// closeReader closes r unless it is nil.
func closeReader(r *pcap.Reader) {
	if r != nil {
		r.Close()
	}
}

// judgeWorkers judges the capture of r with opts.Jobs workers, or with
// one when a parallel judgement reached a bound over all connections (see
// judgeEngine).
func judgeWorkers(r *pcap.Reader, name string, opts Options, p *PICS) (*engine, *pcap.Reader, error) {
	if opts.Jobs <= 1 {
		e, err := judgeSequential(r, name, opts, p)
		return e, nil, err
	}
	e, err := judgeParallel(r, name, opts, p, opts.Jobs)
	if err != nil || !e.sharded {
		return e, nil, err
	}
	if opts.reopen == nil {
		e.note("a state bound over all connections was reached: with %d workers, each judging part of the connections, this report may differ from one worker's", opts.Jobs)
		return e, nil, nil
	}
	r2, err := opts.reopen()
	if err != nil {
		return nil, nil, &CaptureError{File: name, Err: err}
	}
	if opts.marks != nil {
		*opts.marks = marks{stride: opts.marks.stride}
	}
	e, err = judgeSequential(r2, name, opts, p)
	if err != nil {
		r2.Close()
		return nil, nil, err
	}
	return e, r2, nil
}

// judgeSequential judges a capture with one engine, frame by frame.
func judgeSequential(r *pcap.Reader, name string, opts Options, p *PICS) (*engine, error) {
	e := newEngine(p)
	e.loc = opts.CaptureLocation
	var f pcap.Frame
	// The merger asks an engine of its own for tie keys, which names no
	// address while judging (tieKey's nodeHash), as judgeParallel's.
	te := newEngine(p)
	m := merger{te: te, stable: r.Retain(), onLate: e.lateAt, window: opts.Reorder}
	var ifaces ifaceTable
	place := func(l *planeLearning) {
		e.place(l)
		te.place(l)
		ifaces.learnt(l)
	}
	var rl releaser
	if m.stable {
		rl.r = r
	}
	emit := func(f *pcap.Frame, in *pcap.Interface) {
		e.frame(f, in)
		if opts.Progress != nil && e.frames%ProgressEvery == 0 {
			opts.Progress(e.frames)
		}
	}
	la := lookahead{stable: m.stable}
	push := func(f *pcap.Frame, in *pcap.Interface) { m.push(f, in, ifaces.base+len(r.Interfaces()), emit) }
	for read := 0; ; read++ {
		opts.marks.note(r, read)
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			// A capture that cannot be read whole is not judged: the
			// verdicts of its first part could pass what the rest shows
			// failing. The error names the file and, for a malformed
			// block, its offset (a *pcap.FormatError).
			return nil, &CaptureError{File: name, Err: err}
		}
		in := ifaces.get(r, f.Interface, f.Timestamp.UnixNano())
		f.Interface += ifaces.base
		if ifaces.newSection() {
			la = la.next(p, place, push)
		}
		if la.hold(r, &f, in) {
			continue
		}
		la.release(p, place, push)
		push(&f, in)
		if rl.due(f.Offset) {
			rl.release(f.Offset, m.unpinOldest(f.Offset-pinSpan, f.Offset))
		}
	}
	la.release(p, place, push)
	m.flush(emit)
	e.ifaces = &ifaces
	e.noteLate(&m)
	m.noteTies(e)
	return e, nil
}

// JudgeFile judges the capture file name (pcap or pcapng, gzip or not),
// then reads it a second time to attach the decode of every frame the
// evidence names and, with Options.Annotate, to write the annotated copy.
func JudgeFile(name string, opts Options) (*Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if err := ChecksErr(); err != nil {
		return nil, err
	}
	open := pcap.Open
	if opts.Mapped {
		open = pcap.OpenMapped
	}
	r, err := open(name)
	if err != nil {
		return nil, &CaptureError{File: name, Err: err}
	}
	defer r.Close()
	if r.Retain() {
		opts.marks = &marks{stride: markStride}
	}
	opts.reopen = func() (*pcap.Reader, error) { return open(name) }
	rep, err := Judge(r, name, opts)
	if err != nil {
		return nil, err
	}
	if opts.CaptureSHA256 {
		if sum, err := fileSHA256(name); err == nil {
			rep.Capture.SHA256 = sum
		}
	}
	r2, err := open(name)
	if err != nil {
		return nil, &CaptureError{File: name, Err: err}
	}
	defer r2.Close()
	p, _ := opts.resolve()
	var w *pcap.Writer
	var ifaces []pcap.Interface
	if opts.Annotate != nil {
		// One section holding every section's interfaces, numbered across
		// the file (enrich).
		ifaces = append(slices.Clone(r.PastInterfaces()), r.Interfaces()...)
		if len(ifaces) == 0 {
			ifaces = []pcap.Interface{{Name: "capture"}}
		}
		for i := range ifaces {
			ifaces[i].SnapLen = 0
		}
		w, err = pcap.NewWriter(opts.Annotate, ifaces...)
		if err != nil {
			return nil, err
		}
	}
	var sk *seeker
	if w == nil {
		sk = newSeeker(opts.marks, evidenceFrames(rep))
	}
	if err := pcap.Guard(func() error { return enrich(rep, r2, p.Codec(), p.EVModeValue(), w, ifaces, sk) }); err != nil {
		return nil, captureFault(name, err)
	}
	return rep, nil
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

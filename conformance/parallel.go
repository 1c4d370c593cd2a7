package conformance

import (
	"cmp"
	"encoding/binary"
	"io"
	"math"
	"net/netip"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// A parallel judgement (Options.Jobs > 1) shards a capture's frames by
// node pair: every frame between two nodes, in both directions and on
// every plane, goes to one shard, which judges them with an engine of its
// own. The connections of a node pair, their feedback and the endpoint
// operations between the two nodes are judged in one shard, so no check
// needs another shard's state. The reader, one goroutine, merges the
// interfaces in timestamp order and numbers each frame with its place in
// that order; each shard tags what it keeps (findings, reasons, notes,
// timelines) with it, and the merged engine keeps what one engine would
// have kept, then judges the end of the capture. The report is
// byte-identical for any number of workers (TestJobsIdentical). The bounds
// over all connections (MaxFlows, MaxFlowsPerPoint, MaxNodes, MaxEntries,
// MaxPoints) hold per shard, so a shard's state, and all shards' memory,
// stay bounded; a capture that reaches one of them in a shard, or that
// one engine would reach, is judged again by one worker (judgeEngine,
// TestJobsIdenticalAtBounds).
//
// Each shard is a goroutine, and judges a batch only while it holds one
// of Jobs worker slots, so that at most Jobs shards judge at once. There
// are shardsPerWorker times more shards than workers: a node pair's share
// of the frames is known only once it has been judged, and a worker
// whose shards run dry judges another's.

// shardsPerWorker is how many shards each worker serves. On incast
// (eight node pairs, one with 46 % of the frames, given to shards in turn
// as they first appear), one shard per worker gave one worker 69 % of the
// frames, and its lag held the reader back. With two workers on two
// cores, 20 interleaved rounds: 1 took 7.5 % more wall time and 4.1 %
// more CPU than 2, 3 took 17 % more wall time, 4 21 % more (a light
// shard's batch fills slowly, and its frames stay pinned: the reader
// sends it part full, or waits).
const shardsPerWorker = 2

// batchFrames is how many frames go to a shard at once: each batch
// crosses from the reader's core to the shard's and back, and 512 took
// 1.5-5 % less time than 256 or 1,024 on incast with two workers (three
// A/B runs), for about 4 MB more memory.
const batchFrames = 512

// feedFrames is the fewest frames a batch goes with before it is full:
// when its shard is idle and a worker is free, as at the start, when each
// shard's first 512 frames are 1,000-2,000 frames in, and while a shard
// of a light node pair waits. On incast, two workers, 128 against none,
// interleaved rounds: 1.7 % less wall time and 0.6 % less CPU (40
// rounds), 0.8-3.0 % less wall time in three runs of 20-24; 64 and 256
// gave about as much, 32 none.
const feedFrames = 128

// queueDepth is how many batches wait in a shard's channel before the
// reader, sending one more, offers it for help and waits: the reader then
// waits, and wakes, less often. On incast with two workers, 4 against 2
// (paired medians, interleaved rounds): 0.6-0.9 % less wall time and
// 1.3-2.4 % less CPU over three runs of 24-30 rounds, and, with a batch's
// records taken only when it is offered (batch.recs), 1.7 % less wall
// time and 3.3 % less CPU over 24 rounds; 8 took more than 2. Peak RSS:
// incast 57-60 MB either way; one connection (loss) 28 MB against
// 25-26 MB, each queued batch holding its frames' chunks.
const queueDepth = 4

// records is one batch's decode records, which only a batch offered for
// help needs (batch.recs).
type records [batchFrames]pcap.Record

// A batch of frames for one shard. With a retaining reader (a capture
// file) the frames alias the reader's chunks and nothing is copied;
// otherwise each frame's data is copied into bufs.
type batch struct {
	n      int
	frames [batchFrames]pcap.Frame
	ins    [batchFrames]*pcap.Interface // an ifaceTable's copies
	idx    [batchFrames]int
	bufs   [batchFrames][]byte
	// pre holds the ICRCs the reader computed (parallel.ahead).
	pre [batchFrames]wire.PreICRC
	// minOff is the smallest file offset of the frames; seq numbers the
	// batch as sent, and done is set to seq once the shard is through.
	minOff int64
	seq    uint64
	done   atomic.Uint64
	// after is what a new pcapng section's first frames said about the
	// planes, for the shard to take once it has judged the batch's
	// frames, as the frame afterIdx-th emitted (parallel.place).
	after    *planeLearning
	afterIdx int
	// The frames decoded (about a quarter of judging a frame, most of it
	// the ICRC, and needing no connection state) by an idle shard helping
	// from the back (help) before the batch's shard, judging from the
	// front, reaches them: state is frameFree, frameClaimed or frameDecoded
	// (recs, set while the batch is offered, holds the record, which the
	// shard judges as it is; a batch takes recs from parallel.recs only
	// when offered, since most batches never are). live is
	// set while helpers may decode (gen is then the batch's seq); helpers
	// counts those at work. offered is set when the reader offered the
	// batch for help (parallel.send), before sending it to its shard: a
	// batch never offered is judged without claiming its frames, which
	// costs an atomic operation, and a fence, per frame.
	recs    *records
	state   [batchFrames]atomic.Int32
	live    atomic.Bool
	gen     atomic.Uint64
	helpers atomic.Int32
	offered bool
	touched byte // keeps touch's loads
}

// A frame's state in a batch.
const (
	frameFree int32 = iota
	frameClaimed
	frameDecoded
)

// helpMsg offers a batch sent to a shard for others to help with.
type helpMsg struct {
	b   *batch
	seq uint64
}

// help decodes, from the back, the frames of batch seq that its shard has
// not reached, until it meets the shard. Idle shards call it with a
// decoder of their own: the node pairs of a capture seldom split evenly
// between shards, and decoding needs no connection state.
func (b *batch) help(seq uint64, d *pcap.Decoder) {
	b.helpers.Add(1)
	defer b.helpers.Add(-1)
	if !b.live.Load() || b.gen.Load() != seq {
		return // judged already, and maybe reused
	}
	for i := b.n - 1; i >= 0; i-- {
		if f := &b.frames[i]; f.Length > len(f.Data) {
			continue // cut by the snap length: rebuilt in the decoder's own buffer, so its shard decodes it as it judges it
		}
		if !b.state[i].CompareAndSwap(frameFree, frameClaimed) {
			return
		}
		d.DecodePre(&b.frames[i], b.ins[i], &b.recs[i], b.pre[i])
		b.state[i].Store(frameDecoded)
	}
}

// judge judges a batch with its shard's engine, which decodes each frame
// a helper has not decoded, and makes it ready for reuse.
func (b *batch) judge(e *engine) {
	b.touch()
	for i := 0; i < b.n; i++ {
		e.pre = nil
		// A batch never offered has no helper: its frames need no claim.
		if b.offered && !b.state[i].CompareAndSwap(frameFree, frameClaimed) {
			st := b.state[i].Load()
			for ; st == frameClaimed; st = b.state[i].Load() {
				runtime.Gosched() // a helper is decoding it
			}
			e.pre = &b.recs[i]
		}
		e.idx, e.preICRC = b.idx[i], b.pre[i]
		e.frame(&b.frames[i], b.ins[i])
	}
	e.pre, e.preICRC = nil, wire.PreICRC{}
	if b.after != nil {
		e.idx = b.afterIdx
		e.place(b.after)
		b.after = nil
	}
	b.live.Store(false)
	if b.offered {
		for b.helpers.Load() != 0 {
			runtime.Gosched()
		}
		for i := 0; i < b.n; i++ {
			b.state[i].Store(frameFree)
		}
	}
	b.n, b.offered = 0, false
}

// touch loads the cache lines of each frame that decoding reads first
// (its headers and its ICRC): independent loads, which the CPU overlaps,
// where decoding one frame at a time would wait for each. The reader read
// the frames on another core.
func (b *batch) touch() {
	var x byte
	for i := 0; i < b.n; i++ {
		if d := b.frames[i].Data; len(d) > 0 {
			x ^= d[0] ^ d[min(64, len(d)-1)] ^ d[len(d)-1]
		}
	}
	b.touched = x
}

// record returns the frame f decoded: the record a helping shard decoded
// when there is one (batch.judge), else the engine's own.
func (e *engine) record(f *pcap.Frame, in *pcap.Interface) *pcap.Record {
	if r := e.pre; r != nil {
		e.pre = nil
		return r
	}
	e.dec.DecodePre(f, in, &e.rec, e.preICRC)
	return &e.rec
}

func (b *batch) add(f *pcap.Frame, in *pcap.Interface, idx int, stable bool, pre wire.PreICRC) {
	b.pre[b.n] = pre
	g := &b.frames[b.n]
	*g = *f
	g.Comments = nil
	if !stable {
		b.bufs[b.n] = append(b.bufs[b.n][:0], f.Data...)
		g.Data = b.bufs[b.n]
	}
	if b.n == 0 || f.Offset < b.minOff {
		b.minOff = f.Offset
	}
	b.ins[b.n] = in
	b.idx[b.n] = idx
	b.n++
}

// inflight is a batch sent to a shard and not known to be through.
type inflight struct {
	b      *batch
	seq    uint64
	minOff int64
}

// sharder gives each frame its shard (of), remembering the node pairs
// seen.
type sharder struct {
	p          *PICS
	shards     int
	scratch    wire.Packet
	scratchErr wire.Error // its error (DecodeInto: none allocated)
	cut        []byte     // a frame cut by the snap length, rebuilt (DecodeCut)
	assigned   map[uint64]int
	// tied names the addresses learnt to be another's node on another
	// plane (planes.go) by that address.
	tied map[netip.Addr]netip.Addr
	// recent remembers the shard of recent address pairs of plain frames,
	// by a hash of the pair: most frames skip the PICS's node lookups.
	recent [256]shardMemo
}

type shardMemo struct {
	key [4]uint64 // the frame's source and destination address bytes
	v6  bool
	ok  bool
	w   int
}

// of returns the shard of a frame: by its node pair (the PICS's nodes,
// else the addresses), in either direction; shard 0 for a frame without
// an IP header. It runs in the reader for every frame, so a frame whose
// address bytes match a recent pair's takes that pair's shard without
// parsing its addresses.
func (s *sharder) of(b []byte, length int) int {
	off, et, ok := ipHeader(b)
	if !ok {
		return 0
	}
	var key [4]uint64
	v6 := et == 0x86dd
	if v6 {
		if b[off+6] != 17 {
			return s.inner(b, length) // SRv6 or other extension headers
		}
		for i := range key {
			key[i] = binary.LittleEndian.Uint64(b[off+8+8*i:])
		}
	} else {
		key[0] = binary.LittleEndian.Uint64(b[off+12:])
	}
	h := (key[0] ^ key[1] ^ key[2] ^ key[3]) * 0x9e3779b97f4a7c15
	m := &s.recent[h>>(64-8)]
	if m.ok && m.key == key && m.v6 == v6 {
		return m.w
	}
	var src, dst netip.Addr
	if v6 {
		src, dst = netip.AddrFrom16([16]byte(b[off+8:off+24])), netip.AddrFrom16([16]byte(b[off+24:off+40]))
	} else {
		src, dst = netip.AddrFrom4([4]byte(b[off+12:off+16])), netip.AddrFrom4([4]byte(b[off+16:off+20]))
	}
	w := s.pair(src, dst)
	*m = shardMemo{key, v6, true, w}
	return w
}

// inner returns the shard of an IPv6 frame with extension headers, of
// length bytes (b may be cut by the snap length): its nodes are the inner
// packet's, as the engine sees them (wire.Codec.DecodeCut).
func (s *sharder) inner(b []byte, length int) int {
	src, dst, _ := ipAddrs(b)
	_, _, _ = s.p.Codec().DecodeCut(b, length, &s.cut, &s.scratch, &s.scratchErr)
	if ip, _, _ := s.scratch.Offsets(); ip != 0 && s.scratch.IsIPv6 {
		src, dst = netip.AddrFrom16(s.scratch.IP6.Src), netip.AddrFrom16(s.scratch.IP6.Dst)
	}
	return s.pair(src, dst)
}

// pair returns the shard of a node pair.
func (s *sharder) pair(src, dst netip.Addr) int {
	if to, ok := s.tied[src]; ok {
		src = to
	}
	if to, ok := s.tied[dst]; ok {
		dst = to
	}
	h := s.p.nodeHash(src) ^ s.p.nodeHash(dst)
	// Node pairs go to shards in turn as they first appear, which
	// balances a few pairs better than their hashes would.
	if w, ok := s.assigned[h]; ok {
		return w
	}
	if len(s.assigned) >= maxAssigned {
		return int(h % uint64(s.shards))
	}
	w := len(s.assigned) % s.shards
	s.assigned[h] = w
	return w
}

// shardHook, when set (by a benchmark), is called as each shard starts;
// the function it returns, as the shard ends.
var shardHook func() func()

// batchHook, when set (by a test), is called with a batch's frame count as
// a shard, holding a worker's slot, starts judging it.
var batchHook func(frames int)

// maxAssigned bounds the node pairs given shards in turn; further pairs
// go by hash.
const maxAssigned = 1 << 16

func (p *PICS) nodeHash(a netip.Addr) uint64 {
	a = a.Unmap()
	h := uint64(14695981039346656037)
	if n, ok := p.byAddr[a]; ok {
		for i := 0; i < len(n); i++ {
			h = (h ^ uint64(n[i])) * 1099511628211
		}
		return h
	}
	// An undeclared address by its host part only (the IPv6 interface
	// identifier, the IPv4 low 16 bits): a node's addresses on its planes
	// go to one shard, where the engine can tie them (planes.go).
	b := a.As16()
	host := b[8:]
	if a.Is4() {
		host = b[14:]
	}
	for _, c := range host {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// ipAddrs returns a frame's IP source and destination for plain
// encapsulations (as ipDst).
func ipAddrs(b []byte) (src, dst netip.Addr, ok bool) {
	off, et, ok := ipHeader(b)
	switch {
	case !ok:
		return src, dst, false
	case et == 0x0800:
		return netip.AddrFrom4([4]byte(b[off+12 : off+16])), netip.AddrFrom4([4]byte(b[off+16 : off+20])), true
	}
	return netip.AddrFrom16([16]byte(b[off+8 : off+24])), netip.AddrFrom16([16]byte(b[off+24 : off+40])), true
}

// ipHeader returns the offset and EtherType of a frame's IP header after
// up to two VLAN tags, when the frame holds a whole IPv4 or IPv6 header.
func ipHeader(b []byte) (off int, et uint16, ok bool) {
	off = 12
	for k := 0; k < 2 && len(b) >= off+2 && (b[off] == 0x81 && b[off+1] == 0x00 || b[off] == 0x88 && b[off+1] == 0xa8); k++ {
		off += 4
	}
	if len(b) < off+2 {
		return 0, 0, false
	}
	et = uint16(b[off])<<8 | uint16(b[off+1])
	off += 2
	switch {
	case et == 0x0800 && len(b) >= off+20, et == 0x86dd && len(b) >= off+40:
		return off, et, true
	}
	return 0, 0, false
}

// pointClock tracks, in the reader, each capture point's frame count,
// whether its timestamps go backwards, and its frames the merger judged
// out of timestamp order (shards see only part of a point, and none sees
// the merger).
type pointClock struct {
	n      int
	lastNs int64
	back   bool
	late   uint64
}

// judgeParallel reads the capture and judges it with jobs workers, and
// returns the merged engine, ready for finish and report.
func judgeParallel(r *pcap.Reader, name string, opts Options, p *PICS, jobs int) (*engine, error) {
	j := startParallel(r, opts, p, jobs)
	var f pcap.Frame
	// The merger asks an engine of its own for tie keys: the shards'
	// engines are theirs.
	te := newEngine(p)
	m := merger{te: te, stable: j.stable, onLate: j.lateAt, window: opts.Reorder}
	var ifaces ifaceTable
	place := func(l *planeLearning) {
		j.place(l)
		te.place(l)
		ifaces.learnt(l)
	}
	var rl releaser
	if j.stable {
		rl.r = r
	}
	emit := j.emit
	la := lookahead{stable: j.stable}
	push := func(f *pcap.Frame, in *pcap.Interface) { m.push(f, in, ifaces.base+len(r.Interfaces()), emit) }
	for read := 0; ; read++ {
		if j.bounded.Load() {
			break // judged again by one worker (judgeEngine)
		}
		opts.marks.note(r, read)
		err := r.Next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			j.shutdown()
			return nil, &CaptureError{File: name, Err: err}
		}
		j.computeAhead(&f)
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
			rl.release(f.Offset, j.oldest(&m, f.Offset))
		}
	}
	la.release(p, place, push)
	m.flush(emit)
	j.shutdown()
	if j.fault != nil {
		return nil, captureFault(name, j.fault)
	}
	e := mergeEngines(p, opts.CaptureLocation, j.shards, j.idx, j.lastNo)
	e.ifaces = &ifaces
	for name, c := range j.clocks {
		if pt := e.points[name]; pt != nil {
			pt.n, pt.lastNs, pt.nonMonotonic, pt.late = c.n, c.lastNs, c.back, c.late
		}
	}
	e.noteLate(&m)
	m.noteTies(e)
	return e, nil
}

// place gives every shard, and the sharder, what the capture's first
// frames, or a later pcapng section's, said about its planes. Before any
// frame is emitted the shards wait for their first batch and are placed
// here; later, while they judge, each takes it after the frames emitted
// before it, in its next batch (batch.after), as one engine would.
func (j *parallel) place(l *planeLearning) {
	for w, e := range j.shards {
		if j.idx == 0 {
			e.place(l)
			continue
		}
		b := j.pending[w]
		if b == nil {
			b = reuse(j.free)
			b.minOff = math.MaxInt64 // no frame: pins none of the reader's chunks
			j.pending[w] = b
		}
		b.after, b.afterIdx = l, j.idx
		j.send(w)
	}
	for _, t := range l.ties {
		if j.shard.tied == nil {
			j.shard.tied = map[netip.Addr]netip.Addr{}
		}
		j.shard.tied[t.a] = t.to
	}
}

// parallel is one parallel judgement: the shards, and what the reader
// (the goroutine that called judgeParallel) keeps to feed them.
type parallel struct {
	opts    Options
	p       *PICS
	shards  []*engine
	chans   []chan *batch // each shard's batches
	busy    []atomic.Bool // each shard's: judging a batch
	slots   chan struct{} // the workers: a shard judges, or helps, holding one
	free    chan *batch   // batches judged, for reuse
	recs    chan *records // records of batches judged after an offer, for reuse
	help    chan helpMsg  // batches sent, offered to idle shards
	wg      sync.WaitGroup
	faultMu sync.Mutex
	fault   error
	// bounded is set when a shard reached a bound over all connections
	// and the capture can be judged again by one worker (Options.reopen):
	// the reader stops, so that no shard's state grows further.
	bounded atomic.Bool

	stable  bool       // frames alias the reader's chunks (no copies)
	pending []*batch   // each shard's batch being filled
	sent    []inflight // batches sent and maybe not judged (stable only)
	seq     uint64
	shard   sharder
	// Each capture point's clock, and each interface's, found once
	// (views[id].ok).
	clocks     map[string]*pointClock
	views      []ifaceView
	viewClocks []*pointClock
	// ahead holds the ICRCs the reader computed as it read the frames,
	// by frame number (computeAhead).
	ahead      [aheadFrames]aheadICRC
	codec      *wire.Codec
	preScratch wire.PreScratch
	idx        int // frames emitted
	lastNo     int
	t0         int64
}

// startParallel starts judging r's frames with jobs workers, serving
// shardsPerWorker times as many shards.
func startParallel(r *pcap.Reader, opts Options, p *PICS, jobs int) *parallel {
	n := jobs * shardsPerWorker
	j := &parallel{opts: opts, p: p, shards: make([]*engine, n), chans: make([]chan *batch, n), busy: make([]atomic.Bool, n), slots: make(chan struct{}, jobs),
		free: make(chan *batch, (queueDepth+2)*n), recs: make(chan *records, 4*n), help: make(chan helpMsg, 4*n), stable: r.Retain(),
		pending: make([]*batch, n), shard: sharder{p: p, shards: n, assigned: map[uint64]int{}},
		clocks: map[string]*pointClock{}, codec: p.Codec()}
	for w := range j.shards {
		e := newEngine(p)
		e.loc, e.external = opts.CaptureLocation, true
		j.shards[w], j.chans[w] = e, make(chan *batch, queueDepth)
		j.wg.Add(1)
		go j.work(e, j.chans[w], &j.busy[w])
	}
	return j
}

// work is a shard: it judges the batches sent to it, and helps decode
// others' while it has none, each while holding a worker's slot.
func (j *parallel) work(e *engine, in <-chan *batch, busy *atomic.Bool) {
	defer j.wg.Done()
	debug.SetPanicOnFault(true) // as Judge's goroutine
	slot := slotHold{slots: j.slots}
	defer func() {
		if v := recover(); v != nil {
			slot.give()
			j.faultMu.Lock()
			j.fault = panicError(v)
			j.faultMu.Unlock()
			for range in {
			}
		}
	}()
	if shardHook != nil {
		defer shardHook()()
	}
	dec := pcap.Decoder{Codec: e.codec, EVMode: e.mode}
	for {
		var b *batch
		var ok bool
		select {
		case b, ok = <-in:
		default:
			// Nothing to judge: help decode another's batch.
			select {
			case b, ok = <-in:
			case h := <-j.help:
				slot.take()
				h.b.help(h.seq, &dec)
				slot.give()
				continue
			}
		}
		if !ok {
			return
		}
		busy.Store(true)
		slot.take()
		if batchHook != nil {
			batchHook(b.n)
		}
		b.judge(e)
		slot.give()
		busy.Store(false)
		if j.opts.reopen != nil && e.reachedSharedBound() {
			j.bounded.Store(true)
		}
		if b.recs != nil {
			recycle(j.recs, b.recs)
			b.recs = nil
		}
		b.done.Store(b.seq)
		recycle(j.free, b)
	}
}

// slotHold is a shard's hold on one of the workers' slots
// (parallel.slots), which a shard that fails gives back.
type slotHold struct {
	slots chan struct{}
	held  bool
}

// take waits for a free slot and holds it.
func (s *slotHold) take() {
	s.slots <- struct{}{}
	s.held = true
}

// give gives back the slot held, if one is.
func (s *slotHold) give() {
	if s.held {
		<-s.slots
		s.held = false
	}
}

// reuse returns a value waiting in pool, or a new one: the batches and
// decode records judged batches gave back (recycle).
func reuse[T any](pool chan *T) *T {
	select {
	case x := <-pool:
		return x
	default:
		return new(T)
	}
}

// recycle gives x back to pool, unless pool holds enough already.
func recycle[T any](pool chan *T, x *T) {
	select {
	case pool <- x:
	default:
	}
}

// send sends shard w its pending batch, and offers it to idle shards.
func (j *parallel) send(w int) {
	b := j.pending[w]
	j.seq++
	b.seq = j.seq
	if j.stable {
		j.sent = append(j.sent, inflight{b, j.seq, b.minOff})
	}
	b.gen.Store(j.seq)
	b.live.Store(true)
	j.pending[w] = nil
	select {
	case j.chans[w] <- b:
		return
	default:
	}
	// Shard w is behind: the reader waits for it, and an idle shard
	// helps it. Otherwise help would only move decoding to another core,
	// where it costs more (the reader read the frames on this one) and
	// takes the CPU the reader and the other shards are using.
	b.offered = true
	b.recs = reuse(j.recs)
	select {
	case j.help <- helpMsg{b, j.seq}:
	default: // enough offers waiting
	}
	j.chans[w] <- b
}

// emit takes the next frame in timestamp order (the merger's): it numbers
// it, times its capture point, and puts it in its shard's batch.
func (j *parallel) emit(f *pcap.Frame, in *pcap.Interface) {
	j.idx++
	j.lastNo = f.Number
	if j.lastNo == 0 {
		j.lastNo = j.idx
	}
	ns := f.Timestamp.UnixNano()
	if j.idx == 1 {
		j.t0 = ns
		for _, e := range j.shards {
			e.start, e.started = f.Timestamp, true
		}
	}
	if c := j.clock(f.Interface, in); c != nil {
		if c.n > 0 && ns-j.t0 < c.lastNs {
			c.back = true
		}
		c.n++
		c.lastNs = ns - j.t0
	}
	w := j.shard.of(f.Data, f.Length)
	if j.pending[w] == nil {
		j.pending[w] = reuse(j.free)
	}
	b := j.pending[w]
	b.add(f, in, j.idx, j.stable, j.aheadOf(f))
	if b.n == batchFrames || b.n%feedFrames == 0 && j.idle(w) {
		j.send(w)
	}
	if j.opts.Progress != nil && j.idx%ProgressEvery == 0 {
		j.opts.Progress(j.idx)
	}
}

// lateAt counts a frame the merger judges out of timestamp order at its
// capture point (engine.lateAt, for the merged engine).
func (j *parallel) lateAt(f *pcap.Frame, in *pcap.Interface) {
	if c := j.clock(f.Interface, in); c != nil {
		c.late++
	}
}

// clock returns the clock of interface id's capture point (nil past
// MaxPoints), found once per interface.
func (j *parallel) clock(id int, in *pcap.Interface) *pointClock {
	if id >= 0 && id < len(j.views) && j.views[id].ok {
		return j.viewClocks[id]
	}
	v := j.p.resolveInterface(in)
	c := j.clocks[v.point]
	if c == nil && len(j.clocks) < MaxPoints {
		c = &pointClock{}
		j.clocks[v.point] = c
	}
	if id >= 0 && id < MaxInterfaces {
		for len(j.views) <= id {
			j.views = append(j.views, ifaceView{})
			j.viewClocks = append(j.viewClocks, nil)
		}
		j.views[id], j.viewClocks[id] = v, c
	}
	return c
}

// shutdown sends what is pending, closes the shards' channels and waits
// for them.
func (j *parallel) shutdown() {
	for w, b := range j.pending {
		if b != nil && b.n > 0 {
			j.send(w)
		}
		close(j.chans[w])
	}
	j.wg.Wait()
}

// oldest is the smallest offset of a frame held by the merger, waiting in
// a batch or in a batch a shard has not finished, where none is more than
// pinSpan before off: a batch holding such a frame is sent, and the reader
// waits for a shard judging one.
func (j *parallel) oldest(m *merger, off int64) int64 {
	lim := m.unpinOldest(off-pinSpan, off)
	for w, b := range j.pending {
		if b != nil && b.n > 0 && b.minOff < off-pinSpan {
			j.send(w)
		}
	}
	for _, b := range j.pending {
		if b != nil && b.n > 0 {
			lim = min(lim, b.minOff)
		}
	}
	k := 0
	for _, s := range j.sent {
		for s.minOff < off-pinSpan && s.b.done.Load() < s.seq && !j.faulted() {
			time.Sleep(50 * time.Microsecond)
		}
		if s.b.done.Load() < s.seq {
			lim = min(lim, s.minOff)
			j.sent[k] = s
			k++
		}
	}
	j.sent = j.sent[:k]
	return lim
}

// faulted reports whether a shard has failed (it judges no more).
func (j *parallel) faulted() bool {
	j.faultMu.Lock()
	defer j.faultMu.Unlock()
	return j.fault != nil
}

// mergeEngines combines the shards' engines into one holding what a
// single engine would hold after judging every frame (frames frames, the
// last numbered lastNo).
func mergeEngines(p *PICS, loc CaptureLocation, ws []*engine, frames, lastNo int) *engine {
	e := newEngine(p)
	e.loc, e.external = loc, true
	e.idx, e.frameNo = frames+1, lastNo
	e.sharded = oneEngineDiffers(ws)
	var notes []noteAt
	var snaps []snapshot
	for _, w := range ws {
		e.mergeCounts(w)
		for i, s := range w.notes {
			notes = append(notes, noteAt{w.noteOrd[i], s})
		}
		snaps = append(snaps, w.snaps...)
		e.mergeNodes(w)
		e.mergePoints(w)
		e.mergeViews(w)
		for k, wr := range w.rows {
			row := e.rows[k]
			if row == nil {
				row = new(obsRow)
				e.rows[k] = row
			}
			for cs := range wr {
				mergeObs(&row[cs], &wr[cs])
			}
		}
	}
	slices.SortStableFunc(notes, func(a, b noteAt) int { return cmp.Compare(a.ord, b.ord) })
	for _, n := range notes {
		if !e.noteSeen[n.text] && len(e.notes) < maxNotes {
			e.noteSeen[n.text] = true
			e.notes = append(e.notes, n.text)
			e.noteOrd = append(e.noteOrd, n.ord)
		}
	}
	e.keepFirst()
	e.keepSnapshots(snaps)
	if e.flowIDs == nil {
		e.flowIDs = map[flowKey]string{}
	}
	return e
}

// reachedSharedBound reports whether a shard's engine reached a bound over
// all connections.
func (e *engine) reachedSharedBound() bool {
	return e.boundsHit[boundEntries] || e.boundsHit[boundNodes] || e.pointsFull || e.flowsTotal >= MaxFlows
}

// oneEngineDiffers reports whether the shards, each keeping the state of
// its node pairs, may have kept other state than one engine judging every
// frame: a bound over all connections that a shard reached, or that one
// engine would have reached (their counts together reach it; the entries
// at their peaks, which may not coincide, so a judgement near MaxEntries
// counts as reaching it).
func oneEngineDiffers(ws []*engine) bool {
	flows, entries := 0, 0
	nodes, addrs, points := map[string]bool{}, map[netip.Addr]bool{}, map[string]int{}
	for _, w := range ws {
		if w.reachedSharedBound() {
			return true
		}
		flows += w.flowsTotal
		entries += w.peak()
		for n := range w.nodeNames {
			nodes[n] = true
		}
		for a := range w.addrNode {
			addrs[a] = true
		}
		for name, pt := range w.points {
			points[name] += len(pt.flows)
			if pt.full || points[name] >= MaxFlowsPerPoint {
				return true
			}
		}
	}
	// planes.go ties a node's plane addresses while addrNode has room
	// for two more.
	return flows >= MaxFlows || entries >= MaxEntries || len(nodes) >= MaxNodes ||
		len(addrs)+2 > MaxNodes || len(points) >= MaxPoints
}

// noteAt is a shard's note and the place of the frame that made it.
type noteAt struct {
	ord  uint64
	text string
}

// mergeCounts adds a shard's frame counts and bounds.
func (e *engine) mergeCounts(w *engine) {
	if w.started && (!e.started || w.start.Before(e.start)) {
		e.start, e.started = w.start, true
	}
	e.frames += w.frames
	e.mrcFrames += w.mrcFrames
	e.snapped += w.snapped
	e.cutFrames += w.cutFrames
	e.notMRC += w.notMRC
	e.fragments += w.fragments
	for k, n := range w.discarded {
		e.discarded[k] += n
	}
	e.lastNs = max(e.lastNs, w.lastNs)
	e.now = max(e.now, w.now)
	e.flowsTotal += w.flowsTotal
	e.entries += w.entries
	e.bounded = e.bounded || w.bounded
	// A shard that refused a finding or a timeline for the global
	// bound kept as many as one engine does: one engine refuses too.
	e.keptFull = e.keptFull || w.keptFull
	e.snapsFull = e.snapsFull || w.snapsFull
	for n := range w.nodeNames {
		e.nodeNames[n] = true
	}
	for a := range w.ownNodes {
		e.ownNodes[a] = true
	}
}

// mergeNodes adds a shard's per-node counts.
func (e *engine) mergeNodes(w *engine) {
	for k, st := range w.nodes {
		if m := e.nodes[k]; m == nil {
			c := *st
			e.nodes[k] = &c
		} else {
			m.frames += st.frames
			m.maxTTL = max(m.maxTTL, st.maxTTL)
			m.firstNs = min(m.firstNs, st.firstNs)
			m.lastNs = max(m.lastNs, st.lastNs)
		}
	}
	w.flushToNode()
	for k, n := range w.toNode {
		e.toNode[k] += n
	}
	e.noteNodes()
}

// mergePoints takes a shard's capture points: its flows (each node pair's
// are one shard's), endpoint operations and port states.
func (e *engine) mergePoints(w *engine) {
	for name, wp := range w.points {
		pt := e.points[name]
		if pt == nil {
			pt = newPoint(name)
			e.points[name] = pt
		}
		pt.full = pt.full || wp.full
		for n, c := range wp.cutTo {
			pt.countCut(n, c)
		}
		for k, fl := range wp.flows {
			pt.flows[k] = fl
		}
		for k, fls := range wp.pairs {
			pt.pairs[k] = append(pt.pairs[k], fls...)
		}
		for k, v := range wp.ep {
			pt.ep[k] = v
		}
		for k, v := range wp.psu {
			pt.psu[k] = v
		}
	}
}

// keepSnapshots keeps the first maxSnapshots timelines made, as one engine
// makes them; the flows keep pointers into e.snaps, which never grows past
// them.
func (e *engine) keepSnapshots(snaps []snapshot) {
	slices.SortStableFunc(snaps, func(a, b snapshot) int { return cmp.Compare(a.ord, b.ord) })
	e.snaps = make([]snapshot, 0, maxSnapshots)
	kept := map[[2]string]*snapshot{}
	for _, s := range snaps {
		if len(e.snaps) == maxSnapshots {
			e.snapsFull = true
			break
		}
		e.snaps = append(e.snaps, s)
		kept[[2]string{s.point, s.key.String()}] = &e.snaps[len(e.snaps)-1]
	}
	for name, pt := range e.points {
		for _, fl := range pt.flows {
			if fl.tl != nil {
				fl.tl.snap = kept[[2]string{name, fl.key.String()}]
			}
		}
	}
}

func mergeObs(o, w *obsCount) {
	if !w.used {
		return
	}
	o.used = true
	o.ok += w.ok
	o.bad += w.bad
	o.undecided += w.undecided
	o.okT += w.okT
	o.okF += w.okF
	o.badT += w.badT
	o.badA += w.badA
	o.badTA += w.badTA
	o.badF += w.badF
	o.total += w.total
	if w.reason != "" && (o.reason == "" || w.reasonOrd < o.reasonOrd) {
		o.reason, o.reasonOrd = w.reason, w.reasonOrd
	}
	o.findings = append(o.findings, w.findings...)
	o.keepLast(w.last.all())
	if w.firsts != nil {
		o.keepFirsts(w.firsts[:])
	}
}

// keepFirst keeps, of the merged findings, those one engine would have
// kept: per observation key the first MaxFindings in judging order, and
// over all keys the first MaxKeptFindings.
func (e *engine) keepFirst() {
	type ref struct {
		o   *obsCount
		i   int
		ord uint64
	}
	var all []ref
	for _, row := range e.rows {
		for cs := range row {
			o := &row[cs]
			slices.SortStableFunc(o.findings, func(a, b Finding) int { return cmp.Compare(a.ord, b.ord) })
			if len(o.findings) > MaxFindings {
				o.keepLast(o.findings[MaxFindings:])
				o.keepFirsts(o.findings[MaxFindings:])
				o.findings = o.findings[:MaxFindings]
			}
			for i := range o.findings {
				all = append(all, ref{o, i, o.findings[i].ord})
			}
		}
	}
	e.kept = len(all)
	if len(all) <= MaxKeptFindings {
		return
	}
	e.keptFull = true
	slices.SortFunc(all, func(a, b ref) int { return cmp.Compare(a.ord, b.ord) })
	cut := all[MaxKeptFindings-1].ord
	for _, row := range e.rows {
		for cs := range row {
			o := &row[cs]
			n := 0
			var dropped []Finding
			for _, f := range o.findings {
				if f.ord <= cut {
					o.findings[n] = f
					n++
				} else {
					dropped = append(dropped, f)
				}
			}
			o.findings = o.findings[:n]
			o.keepLast(dropped)
			o.keepFirsts(dropped)
		}
	}
	e.kept = MaxKeptFindings
}

// mergeViews takes where a shard placed each interface it saw (its
// capture point and plane, learnt from the traffic or the PICS).
func (e *engine) mergeViews(w *engine) {
	for id, v := range w.views {
		if !v.ok {
			continue
		}
		for len(e.views) <= id {
			e.views = append(e.views, ifaceView{})
		}
		if !e.views[id].ok {
			e.views[id] = v
		}
	}
}

// The reader computes each frame's ICRC as it reads it (computeAhead),
// while the frame's bytes are in its core's cache from the read, and the
// shard's decode takes it (batch.pre, wire.Codec.ComputeICRCPre): the
// payload, which only the ICRC reads, then stays on the reader's core.
// The frame is emitted later, after the merger has held it (at most
// MaxReorder frames of other interfaces, and the lookahead's), so the
// ICRCs wait in a ring by frame number; a frame whose entry was
// overwritten, or that was read before the first emit (while the shards
// wait for the merger's first frame, the reader alone is busy), has its
// ICRC computed by its shard.
const aheadFrames = 8192

// aheadICRC is the ICRC computed for frame number n.
type aheadICRC struct {
	n   int
	pre wire.PreICRC
}

// computeAhead computes frame f's ICRC once frames are being emitted.
func (j *parallel) computeAhead(f *pcap.Frame) {
	if j.idx > 0 && f.Number > 0 {
		j.ahead[f.Number%aheadFrames] = aheadICRC{f.Number, j.codec.PreICRC(f.Data, &j.preScratch)}
	}
}

// aheadOf returns the ICRC computed for frame f, or none.
func (j *parallel) aheadOf(f *pcap.Frame) wire.PreICRC {
	if f.Number <= 0 {
		return wire.PreICRC{}
	}
	if a := &j.ahead[f.Number%aheadFrames]; a.n == f.Number {
		return a.pre
	}
	return wire.PreICRC{}
}

// idle reports whether shard w is neither judging a batch nor has one
// waiting, while a worker is free to judge one.
func (j *parallel) idle(w int) bool {
	return !j.busy[w].Load() && len(j.chans[w]) == 0 && len(j.slots) < cap(j.slots)
}

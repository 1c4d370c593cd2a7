package conformance

import (
	"slices"

	"github.com/openmrc/mrc/pcap"
)

// maxMarks bounds the places JudgeFile's first pass remembers in a capture
// file, every markStride-th frame at first: past it, every other one is
// dropped and the stride doubles, so the index never grows with the
// capture. Tests shrink both.
var maxMarks, markStride = 4096, 256

// marks remembers, while the judge reads a capture, where every stride-th
// frame starts, so that the second pass (enrich) can go straight to the
// frames the evidence names instead of reading the whole file again.
type marks struct {
	stride int
	at     []pcap.Mark // at[i] is before frame i*stride+1
}

// note is called before each frame is read, with the frames read so far.
func (x *marks) note(r *pcap.Reader, read int) {
	if x == nil || read%x.stride != 0 {
		return
	}
	if len(x.at) == maxMarks {
		for i := 0; i < maxMarks/2; i++ {
			x.at[i] = x.at[2*i]
		}
		x.at, x.stride = x.at[:maxMarks/2], 2*x.stride
		if read%x.stride != 0 {
			return
		}
	}
	x.at = append(x.at, r.Mark())
}

// seeker takes a Reader to the frames wanted (sorted frame numbers), one
// after the other, skipping what lies between when a mark allows.
type seeker struct {
	x    *marks
	want []int
	i    int
}

// newSeeker returns a seeker over the wanted frames, or nil when every
// frame must be read (no marks).
func newSeeker(x *marks, want map[int]bool) *seeker {
	if x == nil || len(x.at) == 0 {
		return nil
	}
	s := &seeker{x: x}
	for n := range want {
		s.want = append(s.want, n)
	}
	slices.Sort(s.want)
	return s
}

// before is called before each frame is read, read frames having been
// read: it moves r ahead to the last mark before the next frame wanted,
// and returns false when no frame wanted is left. The first frame is
// always read (its time is the report's origin).
func (s *seeker) before(r *pcap.Reader, read int) bool {
	if s == nil || read == 0 {
		return true
	}
	for s.i < len(s.want) && s.want[s.i] <= read {
		s.i++
	}
	if s.i == len(s.want) {
		return false
	}
	next := s.want[s.i]
	// The last mark with at most next-1 frames before it.
	k := (next - 1) / s.x.stride
	if k >= len(s.x.at) {
		k = len(s.x.at) - 1
	}
	if m := s.x.at[k]; m.Frames() > read {
		r.Seek(m)
	}
	return true
}

// evidenceFrames are the frames the report's findings name.
func evidenceFrames(rep *Report) map[int]bool {
	want := map[int]bool{}
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Frame > 0 {
				want[f.Frame] = true
			}
			for _, r := range f.Related {
				want[r] = true
			}
		}
	}
	return want
}

package conformance

import (
	"testing"

	"github.com/openmrc/mrc/pcap"
)

// BenchmarkJudgeEngine splits BenchmarkJudge's CPU time per frame in one
// run: "read+decode" reads the `loss` capture and decodes and checks every
// frame as the engine does first (pcap.Decoder, default PICS), "judge"
// judges it (Judge, one worker). The engine's own share is the difference.
func BenchmarkJudgeEngine(b *testing.B) {
	path := simCapture(b, "loss")
	p := DefaultPICS()
	b.Run("read+decode", func(b *testing.B) {
		b.ReportAllocs()
		frames, cpu0 := 0, cpuTime()
		for i := 0; i < b.N; i++ {
			r, err := pcap.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			d := pcap.Decoder{Codec: p.Codec(), EVMode: p.EVModeValue()}
			var f pcap.Frame
			var rec pcap.Record
			for r.Next(&f) == nil {
				ifs := r.Interfaces()
				d.Decode(&f, &ifs[f.Interface], &rec)
				frames++
			}
			r.Close()
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(frames), "cpu-ns/frame")
	})
	b.Run("judge", func(b *testing.B) {
		b.ReportAllocs()
		frames, cpu0 := 0, cpuTime()
		for i := 0; i < b.N; i++ {
			r, err := pcap.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			rep, err := Judge(r, path, Options{PICS: p})
			r.Close()
			if err != nil {
				b.Fatal(err)
			}
			frames += rep.Capture.Frames
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(frames), "cpu-ns/frame")
	})
}

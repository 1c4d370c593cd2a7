package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openmrc/mrc/internal/testenv"
	"github.com/openmrc/mrc/pcap"
)

const testdata = "../../pcap/testdata/"

func run(t testing.TB, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var o, e bytes.Buffer
	status = dispatch(args, &o, &e)
	return o.String(), e.String(), status
}

func golden(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(testdata + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecodeGolden checks every output mode of decode against the golden
// files that package pcap's generator writes and its tests keep fresh.
func TestDecodeGolden(t *testing.T) {
	for _, capName := range []string{"valid", "malformed"} {
		file := testdata + capName + ".pcapng"
		for _, tc := range []struct {
			args   []string
			golden string
		}{
			{[]string{file}, ".txt"},
			{[]string{"-V", file}, ".verbose.txt"},
			{[]string{file, "--format", "json"}, ".jsonl"},
			{[]string{"--stats", file}, ".stats.txt"},
			{[]string{"--stats", "--format=json", file}, ".stats.json"},
		} {
			out, errOut, status := run(t, append([]string{"decode"}, tc.args...)...)
			if status != 0 || errOut != "" {
				t.Errorf("decode %v: status %d, stderr %q", tc.args, status, errOut)
			}
			if want := golden(t, capName+tc.golden); out != want {
				t.Errorf("decode %v differs from %s", tc.args, capName+tc.golden)
			}
		}
	}
}

// TestDecodeInputs reads the corpus gzip-compressed, as classic pcap and
// from standard input, and checks the frames decode the same.
func TestDecodeInputs(t *testing.T) {
	dir := t.TempDir()
	ng, err := os.ReadFile(testdata + "valid.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	gzName := filepath.Join(dir, "valid.pcapng.gz")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(ng)
	zw.Close()
	if err := os.WriteFile(gzName, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, status := run(t, "decode", gzName)
	if status != 0 || out != golden(t, "valid.txt") {
		t.Errorf("gzip input: status %d, output differs from valid.txt", status)
	}

	// Classic pcap: no interfaces or comments, so compare from the EV on.
	r, err := pcap.NewReader(bytes.NewReader(ng))
	if err != nil {
		t.Fatal(err)
	}
	var pb bytes.Buffer
	w, _ := pcap.NewPcapWriter(&pb, 0, 0)
	var f pcap.Frame
	for r.Next(&f) == nil {
		f.Comments, f.Interface = nil, 0
		if err := w.WriteFrame(&f); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	pcapName := filepath.Join(dir, "valid.pcap")
	os.WriteFile(pcapName, pb.Bytes(), 0o644)
	out, _, status = run(t, "decode", pcapName)
	want := strings.Split(golden(t, "valid.txt"), "\n")
	for i, l := range strings.Split(out, "\n") {
		if i >= len(want) || len(l) < 30 || len(want[i]) < 30 {
			continue
		}
		if l[:18] != want[i][:18] || l[31:] != want[i][31:] {
			t.Errorf("pcap line %d:\n  %s\nwant\n  %s", i+1, l, want[i])
		}
	}
	if status != 0 {
		t.Errorf("pcap input: status %d", status)
	}
}

func TestDecodeErrors(t *testing.T) {
	dir := t.TempDir()
	ng, _ := os.ReadFile(testdata + "valid.pcapng")
	cut := filepath.Join(dir, "cut.pcapng")
	os.WriteFile(cut, ng[:len(ng)-20], 0o644)
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a capture"), 0o644)
	badProfile := filepath.Join(dir, "p.json")
	os.WriteFile(badProfile, []byte(`{"udp_dst_port": 0}`), 0o644)
	for _, tc := range []struct {
		args   []string
		status int
		stderr string
	}{
		{nil, 2, "usage"},
		{[]string{"nosuch"}, 2, "unknown command"},
		{[]string{"decode"}, 2, "no capture file"},
		{[]string{"decode", "--format", "xml", cut}, 2, "unknown format"},
		{[]string{"decode", "-V", "--format", "json", cut}, 2, "exclude"},
		{[]string{"decode", "--ev-mode", "x", cut}, 2, "EV mode"},
		{[]string{"decode", "--profile", badProfile, cut}, 2, "udp_dst_port"},
		{[]string{"decode", filepath.Join(dir, "missing")}, 2, "no such file"},
		{[]string{"decode", junk}, 2, "not a pcap"},
		{[]string{"decode", cut, junk}, 2, "not a pcap"}, // the worse of 1 and 2
		{[]string{"decode", cut}, 1, "unexpected EOF"},
	} {
		out, errOut, status := run(t, tc.args...)
		if status != tc.status || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", tc.args, status, errOut, tc.status, tc.stderr)
		}
		if len(tc.args) > 1 && strings.HasSuffix(tc.args[len(tc.args)-1], "cut.pcapng") && tc.status == 1 {
			// What decoded before the cut is still printed.
			if n := strings.Count(out, "\n"); n < 20 {
				t.Errorf("%v printed %d lines before the error", tc.args, n)
			}
		}
	}
	out, _, status := run(t, "help")
	if status != 0 || !strings.Contains(out, "decode") {
		t.Errorf("help: status %d, %q", status, out)
	}
}

func TestDecodeCountAndProfile(t *testing.T) {
	out, _, status := run(t, "decode", "-c", "2", testdata+"valid.pcapng")
	if status != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("-c 2: status %d, %d lines", status, strings.Count(out, "\n"))
	}
	// A profile that accepts only 4971 makes the 4791 frames not MRC
	// (WIRE-UDP-1).
	p := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(p, []byte(`{"name":"only-4971","udp_dst_port":4971,"accept_udp_dst_ports":[4971]}`), 0o644)
	out, errOut, status := run(t, "decode", "--profile", p, testdata+"valid.pcapng")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	if !strings.Contains(out, "NOT-MRC UDP@34.dst_port") || !strings.Contains(out, "RDMA_WRITE_ONLY") {
		t.Errorf("profile not applied:\n%s", out)
	}
}

// benchFile writes n frames cycling through the valid corpus to a pcapng.
func benchFile(tb testing.TB, n int) string {
	r, err := pcap.Open(testdata + "valid.pcapng")
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var frames [][]byte
	var f pcap.Frame
	for r.Next(&f) == nil {
		frames = append(frames, bytes.Clone(f.Data))
	}
	name := filepath.Join(tb.TempDir(), "bench.pcapng")
	out, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := pcap.NewWriter(out, pcap.Interface{Point: "tx", Plane: 0}, pcap.Interface{Point: "tx", Plane: 1})
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		if err := w.WritePacket(t0.Add(time.Duration(i)*time.Microsecond), i%2, frames[i%len(frames)]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	out.Close()
	return name
}

const benchFrames = 50000

// BenchmarkDecodeJSON runs `mrc-conform decode --format json` end to end
// over a capture of benchFrames frames; ns/frame is reported.
func BenchmarkDecodeJSON(b *testing.B) {
	file := benchFile(b, benchFrames)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status := runDecode([]string{"--format", "json", file}, io.Discard, io.Discard); status != 0 {
			b.Fatalf("status %d", status)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchFrames), "ns/frame")
}

// BenchmarkTsharkFields runs tshark with the generated MRC dissector,
// -T fields, over the same capture, for the README's comparison.
func BenchmarkTsharkFields(b *testing.B) {
	tshark := testenv.LookPath(b, "tshark")
	file := benchFile(b, benchFrames)
	lua, _ := filepath.Abs("../../pcap/wireshark/mrc.lua")
	args := []string{"-n", "-X", "lua_script:" + lua, "-r", file, "-T", "fields", "-e", "frame.number",
		"-e", "mrc.bth.opcode", "-e", "mrc.bth.dest_qp", "-e", "mrc.bth.psn", "-e", "mrc.ev", "-e", "mrc.req"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(tshark, args...)
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchFrames), "ns/frame")
}

// TestDecodeFilter checks -Y: the frames shown, --stats over the selected
// frames, -c counting frames read, a bad expression's exit status and
// first line, and -G fields.
func TestDecodeFilter(t *testing.T) {
	file := testdata + "valid.pcapng"
	numbers := func(out string) []string {
		var n []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				n = append(n, f[0])
			}
		}
		return n
	}
	out, errOut, status := run(t, "decode", file, "-Y", "mrc.bth.opcode == RDMA_WRITE_ONLY && mrc.bth.psn < 0x100")
	if status != 0 || errOut != "" || strings.Join(numbers(out), " ") != "4 13 14 16" {
		t.Errorf("-Y: status %d, stderr %q, frames %v, want 4 13 14 16", status, errOut, numbers(out))
	}
	all := strings.Split(golden(t, "valid.txt"), "\n")
	if want := all[3] + "\n"; !strings.HasPrefix(out, want) {
		t.Errorf("-Y changes the line of frame 4: %q, want %q", strings.SplitAfter(out, "\n")[0], want)
	}
	if out, _, _ := run(t, "decode", "-c", "10", "-Y", "mrc.bth.psn >= 0x100", file); out != "" {
		t.Errorf("-c 10 -Y (frames 30-32 match): printed %q, want nothing: -c counts frames read", out)
	}
	out, _, _ = run(t, "decode", "--stats", "-Y", "mrc.neth", file)
	if !strings.HasPrefix(out, "Frames: 7  MRC: 7 ") {
		t.Errorf("--stats -Y mrc.neth (7 NACKs) begins %q", strings.SplitAfter(out, "\n")[0])
	}
	out, errOut, status = run(t, "decode", "-Y", "mrc.bth.psn = 5", file)
	first, _, _ := strings.Cut(errOut, "\n")
	if status != 2 || out != "" || first != `mrc-conform decode: -Y: filter column 13: syntax error: "=": write == to compare` ||
		!strings.Contains(errOut, "mrc.bth.psn = 5\n            ^\n") {
		t.Errorf("bad -Y: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if _, errOut, status := run(t, "decode", "--no-check", "-Y", "mrc.icrc_ok == 0", file); status != 2 || !strings.Contains(errOut, "drop --no-check") {
		t.Errorf("-Y mrc.icrc_ok with --no-check: status %d, stderr %q", status, errOut)
	}
	out, errOut, status = run(t, "decode", "-G", "fields")
	names := strings.Split(strings.TrimSpace(out), "\n")
	if status != 0 || errOut != "" || !slices.Contains(names, "mrc.bth.psn") || !slices.Contains(names, "mrc.ev") ||
		!slices.Contains(names, "ipv6.addr") || len(names) != len(pcap.FilterFields(nil)) {
		t.Errorf("-G fields: status %d, stderr %q, %d names", status, errOut, len(names))
	}
}

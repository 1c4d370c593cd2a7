package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/wire"
)

// Render decodes a capture with the default decoder and returns its
// output in format, or the --stats summary when stats is set.
func Render(c *wire.Codec, capture []byte, format pcap.OutputFormat, stats bool) ([]byte, error) {
	r, err := pcap.NewReader(bytes.NewReader(capture))
	if err != nil {
		return nil, err
	}
	d := &pcap.Decoder{Codec: c}
	var out bytes.Buffer
	pr := pcap.NewPrinter(&out, format, c, d.EVMode)
	st := pcap.NewStats()
	err = d.Each(r, func(rec *pcap.Record) error {
		if stats {
			st.Add(rec)
			return nil
		}
		return pr.Print(rec)
	})
	if err != nil {
		return nil, err
	}
	if stats {
		if format == pcap.OutputJSON {
			err = st.WriteJSON(&out)
		} else {
			err = st.WriteText(&out)
		}
	} else {
		err = pr.Flush()
	}
	return out.Bytes(), err
}

// Captures are the corpus captures by base name.
func Captures(c *wire.Codec) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, build := range map[string]func(*wire.Codec) ([]Entry, error){"valid": Valid, "malformed": Malformed} {
		e, err := build(c)
		if err != nil {
			return nil, err
		}
		if out[name], err = WriteCapture(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Files returns every generated file by its path relative to pcap/: the
// corpus captures under testdata/ with their golden outputs
// (NAME.txt, NAME.verbose.txt, NAME.jsonl, NAME.stats.txt,
// NAME.stats.json), the golden outputs (NAME.txt, NAME.stats.txt) of the
// recorded captures in ScenarioDir, and the Wireshark dissector for
// wire.Default.
func Files() (map[string][]byte, error) {
	c := wire.Default
	caps, err := Captures(c)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for name, data := range caps {
		files["testdata/"+name+".pcapng"] = data
		for _, g := range []struct {
			suffix string
			format pcap.OutputFormat
			stats  bool
		}{{".txt", pcap.OutputText, false}, {".verbose.txt", pcap.OutputVerbose, false},
			{".jsonl", pcap.OutputJSON, false}, {".stats.txt", pcap.OutputText, true},
			{".stats.json", pcap.OutputJSON, true}} {
			out, err := Render(c, data, g.format, g.stats)
			if err != nil {
				return nil, err
			}
			files["testdata/"+name+g.suffix] = out
		}
	}
	// The simulator's impairment captures (mrc-sim capture) are evidence
	// kept as they were recorded; their decoder outputs are generated.
	recorded, err := filepath.Glob(filepath.Join(ScenarioDir, "*.pcapng"))
	if err != nil {
		return nil, err
	}
	for _, path := range recorded {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(path, ".pcapng")
		for _, g := range []struct {
			suffix string
			stats  bool
		}{{".txt", false}, {".stats.txt", true}} {
			out, err := Render(c, data, pcap.OutputText, g.stats)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			files[base+g.suffix] = out
		}
	}
	var lua bytes.Buffer
	if err := pcap.WriteLua(&lua, c); err != nil {
		return nil, err
	}
	files[LuaPath] = lua.Bytes()
	return files, nil
}

// ScenarioDir holds the simulator's impairment captures, relative to pcap/.
const ScenarioDir = "testdata/scenarios"

// LuaPath is where the generated dissector lives, relative to pcap/.
const LuaPath = "wireshark/mrc.lua"

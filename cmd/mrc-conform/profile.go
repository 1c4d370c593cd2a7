package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/openmrc/mrc/conformance"
	"github.com/openmrc/mrc/pcap"
	"github.com/openmrc/mrc/spec"
)

// profileFlagUsage documents --profile for decode, judge and run.
var profileFlagUsage = fmt.Sprintf("wire profile: a preset (%v) or a JSON profile file", spec.PresetNames())

// loadProfileArg resolves --profile: a value naming an existing file is a
// JSON profile (fields not given keep the default's values); any other
// value is a preset name, and an unknown one is an error listing the
// presets.
func loadProfileArg(v string) (spec.Profile, error) {
	if st, err := os.Stat(v); err == nil && st.Mode().IsRegular() {
		b, err := os.ReadFile(v)
		if err != nil {
			return spec.Profile{}, err
		}
		p := spec.DefaultProfile()
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return spec.Profile{}, fmt.Errorf("profile %s: %w", v, err)
		}
		return p, p.Validate()
	}
	return spec.Preset(v)
}

// startAdvice works out, on a goroutine of its own, the presets the
// capture name fits better than the PICS's profile (pcap.Fit), noted after
// a judge's report (writeProfileAdvice). It reads the capture's first
// frames apart from the judge and needs nothing the judge finds, so a
// judge run starts it first: it then runs while the judge reads the
// frames it holds before judging any (about 12 ms on the incast capture,
// the workers idle) or on the core one worker leaves free, rather than
// after the report (3-4 ms).
func startAdvice(name string, p *conformance.PICS) <-chan []string {
	if p == nil {
		p = conformance.DefaultPICS()
	}
	out := make(chan []string, 1)
	go func() {
		advice, _ := pcap.AdviseFile(name, p.Codec(), p.EVModeValue()) // the judge reports read errors
		out <- advice
	}()
	return out
}

// writeProfileAdvice writes the notes of startAdvice's advice.
func writeProfileAdvice(advice []string, w io.Writer) {
	for _, a := range advice {
		fmt.Fprintln(w, "note: "+a)
	}
}

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

// adviseProfile notes, after a judge's summary, a preset the capture fits
// better than the PICS's profile (pcap.Fit).
func adviseProfile(name string, p *conformance.PICS, w io.Writer) {
	if p == nil {
		p = conformance.DefaultPICS()
	}
	advice, _ := pcap.AdviseFile(name, p.Codec(), p.EVModeValue()) // the judge has reported read errors already
	for _, a := range advice {
		fmt.Fprintln(w, "note: "+a)
	}
}

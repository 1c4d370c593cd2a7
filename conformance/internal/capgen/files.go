package capgen

// PICS is the PICS of the scripted implementation in every capture; it is
// also the documented example of the format (conformance/formats.md).
const PICS = `{
  "pics_version": 1,
  "implementation": {
    "vendor": "openmrc",
    "model": "capgen scripted requester and responder",
    "version": "1"
  },
  "ev_mode": "stev",
  "features": {
    "trim_nack": true,
    "tseth": true,
    "endpoint_ops": true,
    "dynamic_mpr": false
  },
  "nodes": {
    "A": ["fd00::a"],
    "B": ["fd00::b"]
  },
  "parameters": {
    "path_mtu": 256,
    "mpr": 1,
    "mpr_dest": 1,
    "max_wimm": 2,
    "max_wimm_dest": 2,
    "timeout": 8,
    "linear_cnt": 3,
    "exp_cnt": 25,
    "base_rtt_ns": 5000,
    "ev_min_active": 1
  },
  "capture": {
    "points": {"A": "A", "B": "B"},
    "timestamps": "trusted",
    "timer_tolerance_ns": 1000,
    "reaction_time_ns": 1000,
    "from_qp_start": true
  }
}
`

// Deviations is the documented example of the deviations format: one
// active deviation and one expired (against the tests' date, 2026-06-01).
const Deviations = `# mrc-conform deviations (format: conformance/formats.md)
# NAME                 CASES             EXPIRES     REASON
fw12-retry-flag        MRC-LR-RTX-003    2026-12-31  firmware 1.2 omits rtx on SACK-driven retransmissions; fixed in 1.3 (vendor ticket 4711)
old-ecn-marking        MRC-WIRE-DSCP-*   2026-01-31  ECN on control packets, fixed in firmware 1.1
`

// Files returns every generated file of conformance/testdata, by name.
func Files() (map[string][]byte, error) {
	out := map[string][]byte{
		"reference.pics.json": []byte(PICS),
		"example.deviations":  []byte(Deviations),
	}
	for _, f := range Faults {
		b, err := Capture(f)
		if err != nil {
			return nil, err
		}
		out[FileName(f)] = b
	}
	return out, nil
}

package statemachine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestMutantTraceMemberLimits: ParseTraceLine refuses a member one past
// the range of its Event field instead of truncating it (the NDJSON schema
// of trace.go, version 1, which no spec requirement names): qp, psn and ev
// are 32-bit, msn 16-bit. The largest value of each is accepted.
func TestMutantTraceMemberLimits(t *testing.T) {
	line := func(key string, v uint64) string {
		vals := map[string]string{"t": "1", "qp": "0", "kind": `"EVState"`, "psn": "0", "ev": "0", "msn": "0",
			"plane": "0", "from": "0", "to": "0", "reason": "0", "flags": "0", "value": "0"}
		vals[key] = fmt.Sprint(v)
		var b strings.Builder
		for i, k := range traceKeys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%s", k, vals[k])
		}
		return "{" + b.String() + "}"
	}
	for _, c := range []struct {
		key string
		max uint64
	}{{"qp", 1<<32 - 1}, {"psn", 1<<32 - 1}, {"ev", 1<<32 - 1}, {"msn", 1<<16 - 1}} {
		if _, err := ParseTraceLine([]byte(line(c.key, c.max))); err != nil {
			t.Errorf("%s = %d (the largest): %v", c.key, c.max, err)
		}
		for _, v := range []uint64{c.max + 1, c.max + 2} {
			if r, err := ParseTraceLine([]byte(line(c.key, v))); !errors.Is(err, ErrTraceSyntax) {
				t.Errorf("%s = %d: %+v, %v; want ErrTraceSyntax", c.key, v, r.Event, err)
			}
		}
	}
}

// TestMutantReadTraceLineNumber: ReadTrace's error names the line that is
// wrong, counting from 1 and counting the empty lines it skips.
func TestMutantReadTraceLineNumber(t *testing.T) {
	good := string(Event{Kind: EvEVState, Time: 1}.AppendJSON(nil))
	_, err := ReadTrace(strings.NewReader(good + "\n" + good + "{bad}\n"))
	if !errors.Is(err, ErrTraceSyntax) || !strings.HasPrefix(err.Error(), "line 4: ") {
		t.Errorf("error %v, want line 4: and ErrTraceSyntax", err)
	}
}

// TestMutantTraceEdgeLines: a harness record with an empty kind name
// (AppendTraceRecord writes any name) reads back with that name, and a line
// cut short right after a member's colon is refused with ErrTraceSyntax, not
// read past its end.
func TestMutantTraceEdgeLines(t *testing.T) {
	e := Event{Time: 3, PSN: 9}
	r, err := ParseTraceLine(AppendTraceRecord(nil, "", e))
	if err != nil || r.Name != "" || r.Event != e {
		t.Errorf("empty kind: %+v %q, %v; want %+v", r.Event, r.Name, err, e)
	}
	for _, line := range []string{`{"t":}`, `{"t":-}`, `{"t":1,"qp":}`} {
		if _, err := ParseTraceLine([]byte(line)); !errors.Is(err, ErrTraceSyntax) {
			t.Errorf("%s: %v, want ErrTraceSyntax", line, err)
		}
	}
}

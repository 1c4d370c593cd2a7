package statemachine

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestTraceLineGolden pins the NDJSON schema: member names, order and
// number formatting (trace.go, schema version 1).
func TestTraceLineGolden(t *testing.T) {
	e := Event{Kind: EvEVState, Time: 2000, QPN: 0x11, EV: 0x201, Plane: 1, From: uint8(EVGood), To: uint8(EVSkip),
		Reason: uint8(CauseTrimmed)}
	got := string(e.AppendJSON(nil))
	want := `{"t":2000,"qp":17,"kind":"EVState","psn":0,"ev":513,"msn":0,"plane":1,"from":1,"to":2,"reason":2,"flags":0,"value":0}` + "\n"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	rec := string(AppendTraceRecord(nil, "NetDrop", Event{Time: 5, PSN: 3, EV: 0x100}))
	if !strings.HasPrefix(rec, `{"t":5,"qp":0,"kind":"NetDrop","psn":3,"ev":256,`) {
		t.Fatalf("harness record %s", rec)
	}
	if TraceSchemaVersion != 1 {
		t.Fatal("schema version changed: update the golden line and the schema comment")
	}
}

// TestTraceRoundTrip: every event survives encode → decode, the line is
// valid JSON with the schema's members in order, and encoding is canonical
// (re-encoding the decoded event gives the same bytes).
func TestTraceRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := Event{
			Kind:   EventKind(rapid.IntRange(1, len(evKindNames)-1).Draw(t, "kind")),
			Time:   Time(rapid.Int64Range(-1<<40, 1<<62).Draw(t, "t")),
			QPN:    rapid.Uint32().Draw(t, "qp"),
			PSN:    rapid.Uint32().Draw(t, "psn"),
			EV:     rapid.Uint32().Draw(t, "ev"),
			MSN:    rapid.Uint16().Draw(t, "msn"),
			Plane:  rapid.Uint8().Draw(t, "plane"),
			From:   rapid.Uint8().Draw(t, "from"),
			To:     rapid.Uint8().Draw(t, "to"),
			Reason: rapid.Uint8().Draw(t, "reason"),
			Flags:  rapid.Uint8().Draw(t, "flags"),
			Value:  rapid.Uint64().Draw(t, "value"),
		}
		line := e.AppendJSON(nil)
		r, err := ParseTraceLine(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if r.Event != e || r.Name != e.Kind.String() {
			t.Fatalf("round trip: got %+v %q, want %+v", r.Event, r.Name, e)
		}
		if again := r.Event.AppendJSON(nil); !bytes.Equal(again, line) {
			t.Fatalf("not canonical: %s vs %s", again, line)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || len(m) != len(traceKeys) {
			t.Fatalf("not a %d-member JSON object: %s (%v)", len(traceKeys), line, err)
		}
		pos := -1
		for _, k := range traceKeys {
			p := bytes.Index(line, []byte(`"`+k+`":`))
			if p <= pos {
				t.Fatalf("member %q out of order in %s", k, line)
			}
			pos = p
		}
	})
}

func TestTraceParseRejects(t *testing.T) {
	good := string(Event{Kind: EvRetry, Value: 1}.AppendJSON(nil))
	for _, bad := range []string{
		"", "{}", "[1]",
		strings.Replace(good, `"psn":0,"ev":0`, `"ev":0,"psn":0`, 1), // order
		strings.Replace(good, `"psn":0`, `"psn":-1`, 1),              // sign
		strings.Replace(good, `"plane":0`, `"plane":256`, 1),         // range
		strings.Replace(good, `"value":1}`, `"value":1,"x":2}`, 1),   // extra member
		strings.Replace(good, `"kind":"Retry"`, `"kind":7`, 1),       // type
		strings.Replace(good, `"t":0`, `"t": 0`, 1),                  // white space
	} {
		if _, err := ParseTraceLine([]byte(bad)); !errors.Is(err, ErrTraceSyntax) {
			t.Errorf("ParseTraceLine(%q) = %v, want ErrTraceSyntax", bad, err)
		}
	}
}

// TestTraceScenario writes the trace of a lossy scenario (a trimmed PSN,
// LR-NACK-1, EV-ST-3) and reads it back unchanged; harness records
// interleave with the QPs' events.
func TestTraceScenario(t *testing.T) {
	s := newPair(t)
	s.rule = func(from int, o *Outgoing) action {
		psn, w := dataPSN(o)
		return action{trim: from == 0 && w && psn == 1 && !o.Pkt.BTH.Retransmit}
	}
	s.write(0, 1, 0, 3*1024, true)
	s.run(10 * Microsecond)
	var buf bytes.Buffer
	var all []Event
	for _, evs := range s.events {
		all = append(all, evs...)
	}
	if err := WriteTrace(&buf, all); err != nil {
		t.Fatal(err)
	}
	buf.Write(AppendTraceRecord(nil, "Post", Event{QPN: qpnA, Value: 1}))
	recs, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(all)+1 {
		t.Fatalf("%d records, want %d", len(recs), len(all)+1)
	}
	kinds := map[EventKind]bool{}
	for i, e := range all {
		if recs[i].Event != e {
			t.Fatalf("record %d: %+v, want %+v", i, recs[i].Event, e)
		}
		kinds[e.Kind] = true
	}
	if last := recs[len(recs)-1]; last.Name != "Post" || last.Event.Kind != EvNone {
		t.Fatalf("harness record decoded as %+v", last)
	}
	for _, k := range []EventKind{EvPacketSent, EvPacketReceived, EvPlaced, EvSACKSent, EvNACKSent, EvSACKReceived,
		EvNACKReceived, EvEVState, EvCompleted, EvIMMDelivered, EvLost, EvRetry} {
		if !kinds[k] {
			t.Errorf("scenario trace has no %s event", k)
		}
	}
	if _, err := ReadTrace(strings.NewReader("{\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("ReadTrace of a bad line: %v", err)
	}
}

package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestRunReportTimeline: a failing case of run gets the per-EV timeline
// the judge draws (JSON timelines, HTML SVG), with the failing frames
// marked; the HTML lists failures first and renders inline code.
func TestRunReportTimeline(t *testing.T) {
	args := []string{"run", "--fault", "go-back-n", "--cases", "MRC-CMP-SND-101,MRC-LR-RTX-101,MRC-WIRE-ENC-101"}
	out, errs, code := run(t, append(args, "--format", "json")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errs)
	}
	var doc struct {
		Timelines []struct {
			Case   string `json:"case"`
			Events []struct {
				Frame int    `json:"frame"`
				Kind  string `json:"kind"`
				Mark  bool   `json:"mark"`
			} `json:"events"`
		} `json:"timelines"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Timelines) != 1 || doc.Timelines[0].Case != "MRC-LR-RTX-101" {
		t.Fatalf("timelines %+v: want one, of the failing MRC-LR-RTX-101", doc.Timelines)
	}
	kinds, marked := map[string]int{}, 0
	for _, e := range doc.Timelines[0].Events {
		kinds[e.Kind]++
		if e.Mark {
			marked++
		}
	}
	if kinds["send"] == 0 || kinds["rtx"] == 0 || kinds["sack"] == 0 || marked == 0 {
		t.Errorf("timeline kinds %v, %d marked frames: want sends, retransmissions, SACKs and the failing frames marked", kinds, marked)
	}

	html, _, _ := run(t, append(args, "--format", "html")...)
	rows := regexp.MustCompile(`<tr><td><a href="#([A-Z0-9-]+)">`).FindAllStringSubmatch(html, -1)
	if len(rows) != 3 || rows[0][1] != "MRC-LR-RTX-101" {
		t.Errorf("case table order %v: want the failure first", rows)
	}
	details := html[strings.Index(html, `<div class="case" id="MRC-LR-RTX-101">`):]
	details = details[:strings.Index(details[1:], `<div class="case"`)+1]
	if !strings.Contains(details, "<svg") {
		t.Error("the failing case's details have no timeline")
	}
	if strings.Contains(html, "`") || !strings.Contains(html, "<code>") {
		t.Error("Markdown backticks shown raw, or no inline code rendered")
	}
}

// TestRunTimelineWithCapture: with --capture, the timeline's frame
// numbers are the capture's, as the findings' are: the marked events
// are exactly the frames of the FAIL findings.
func TestRunTimelineWithCapture(t *testing.T) {
	capture := t.TempDir() + "/run.pcapng"
	out, errs, code := run(t, "run", "--fault", "go-back-n", "--cases", "MRC-LR-RTX-101", "--capture", capture, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var doc struct {
		Cases []struct {
			Findings []struct {
				Frame   int    `json:"frame"`
				Verdict string `json:"verdict"`
			} `json:"findings"`
		} `json:"cases"`
		Timelines []struct {
			Events []struct {
				Frame int  `json:"frame"`
				Mark  bool `json:"mark"`
			} `json:"events"`
		} `json:"timelines"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Timelines) != 1 {
		t.Fatalf("%v; %d timelines", err, len(doc.Timelines))
	}
	want, got := map[int]bool{}, map[int]bool{}
	for _, c := range doc.Cases {
		for _, f := range c.Findings {
			if f.Verdict == "FAIL" {
				want[f.Frame] = true
			}
		}
	}
	last := 0
	for _, e := range doc.Timelines[0].Events {
		if e.Mark {
			got[e.Frame] = true
		}
		if e.Frame < last {
			t.Errorf("events out of frame order: %d after %d", e.Frame, last)
		}
		last = e.Frame
	}
	if len(want) == 0 || len(got) != len(want) {
		t.Errorf("marked frames %v, FAIL findings' frames %v", got, want)
	}
	for f := range want {
		if !got[f] {
			t.Errorf("finding frame %d not marked", f)
		}
	}
}

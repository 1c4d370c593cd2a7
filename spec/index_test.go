package spec

import (
	"maps"
	"testing"
	"testing/fstest"
)

// TestLevelIndexMatchesRegistry: the level index (LevelOf,
// NumRequirements) holds exactly the registry's requirements with their
// levels.
func TestLevelIndexMatchesRegistry(t *testing.T) {
	want := map[string]Level{}
	for _, q := range Requirements() {
		want[q.ID] = q.Level
	}
	if got := levelIndex(); !maps.Equal(got, want) {
		for id, l := range want {
			if got[id] != l {
				t.Errorf("%s: index %q, registry %q", id, got[id], l)
			}
		}
		for id := range got {
			if _, ok := want[id]; !ok {
				t.Errorf("%s: in the index, not in the registry", id)
			}
		}
	}
	if n := NumRequirements(); n != len(want) || n < 150 {
		t.Errorf("NumRequirements() = %d, registry %d", n, len(want))
	}
	if l, ok := LevelOf("WIRE-BTH-1"); !ok || l != Must {
		t.Errorf("LevelOf(WIRE-BTH-1) = %q, %v", l, ok)
	}
	if _, ok := LevelOf("WIRE-" + "XYZ-99"); ok {
		t.Error("LevelOf found an ID the specification does not define")
	}
}

// TestIndexLevelsAsParse: on Markdown that puts requirement-like lines in
// code fences and continuation lines, a level after a line break, a fence
// in a continuation line, CRLF
// line ends and two files, the index reads the requirements Parse reads.
func TestIndexLevelsAsParse(t *testing.T) {
	files := map[string]string{
		"a.md": "# A\n\n- **AA-X-1** (MUST NOT; provenance: p; confidence: primary) one\n" +
			"  continued, with - **AA-X-9** (MAY; inside) text\n" +
			"```\n- **AA-X-2** (MUST; provenance: p; confidence: primary) fenced\n```\n" +
			"- **AA-X-3**\r\n  (SHOULD; provenance: p; confidence: secondary) level on the next line\r\n" +
			"  ```\n- **AA-X-4** (MAY; provenance: p; confidence: primary) after an indented fence\n" +
			"  ```\n",
		"b.md": "## B\n* not a requirement\n- **BB-Y-1** (SHOULD NOT; provenance: q; confidence: primary) two\n",
	}
	fsys := fstest.MapFS{}
	for n, s := range files {
		fsys[n] = &fstest.MapFile{Data: []byte(s)}
	}
	r, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Level{}
	for _, q := range r.Requirements() {
		want[q.ID] = q.Level
	}
	if got := indexLevels(fsys); !maps.Equal(got, want) || len(want) != 4 {
		t.Errorf("index %v\nParse %v", got, want)
	}
}

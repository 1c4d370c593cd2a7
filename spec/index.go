package spec

import (
	"bufio"
	"bytes"
	"io/fs"
	"strings"
	"sync"
)

// levelIndex is each embedded requirement's level by ID, read from the
// requirement lines alone: a program that only looks IDs up (the
// conformance catalog as it loads, a report counting the requirements)
// reads it instead of parsing the whole specification (Embedded), whose
// text, sections and ambiguity register cost a third of mrc-conform's
// start-up (its page faults and instructions).
// TestLevelIndexMatchesRegistry keeps it equal to the registry's IDs and
// levels.
var levelIndex = sync.OnceValue(func() map[string]Level { return indexLevels(mdFiles) })

// LevelOf returns the level of the embedded requirement id, and whether
// the specification defines it, without parsing the whole specification.
func LevelOf(id string) (Level, bool) {
	l, ok := levelIndex()[id]
	return l, ok
}

// NumRequirements returns the number of requirements of the embedded
// specification (len(Requirements()), without parsing it whole).
func NumRequirements() int { return len(levelIndex()) }

// indexLevels reads the requirement lines of the Markdown files of fsys
// as Parse does (files in name order, code fences and continuation lines
// skipped) and returns each requirement's level by ID. A requirement line
// it cannot read is left out: Parse reports it (TestEmbeddedRegistryParses).
func indexLevels(fsys fs.FS) map[string]Level {
	m := make(map[string]Level, 512)
	names, _ := fs.Glob(fsys, "*.md") // sorted
	buf := make([]byte, 16<<10)
	for _, n := range names {
		f, err := fsys.Open(n)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(buf, 1<<20)
		var ix lineIndexer
		for sc.Scan() {
			ix.line(sc.Bytes(), m)
		}
		ix.finish(m)
		f.Close()
	}
	return m
}

// lineIndexer follows one file's lines: whether it is inside a code
// fence, and the requirement item being read (its first line, and the
// continuation lines only when the first line lacks the level).
type lineIndexer struct {
	inFence, inItem bool
	item            string
}

// line reads one line. Only a list item's line becomes a string (to be
// matched by reqCandidate): the other lines of the files allocate nothing.
func (ix *lineIndexer) line(line []byte, m map[string]Level) {
	trimmed := bytes.TrimSpace(line)
	var item string
	if len(trimmed) > 0 && strings.IndexByte("-*+", trimmed[0]) >= 0 {
		if s := string(line); reqCandidate(s) {
			item = s
		}
	}
	if bytes.HasPrefix(line, []byte("  ")) && len(trimmed) > 0 && item == "" {
		if ix.inItem && !strings.Contains(ix.item, ";") {
			ix.item += " " + string(trimmed)
		}
		if ix.inItem {
			return
		}
	}
	ix.finish(m)
	if bytes.HasPrefix(trimmed, []byte("```")) {
		ix.inFence = !ix.inFence
		return
	}
	if !ix.inFence && item != "" {
		ix.item, ix.inItem = item, true
	}
}

// finish indexes the requirement item read so far, if any: "- **ID**
// (LEVEL; ...".
func (ix *lineIndexer) finish(m map[string]Level) {
	if !ix.inItem {
		return
	}
	ix.inItem = false
	rest, ok := strings.CutPrefix(ix.item, "- **")
	if !ok {
		return
	}
	id, rest, ok := strings.Cut(rest, "** (")
	if !ok || strings.Contains(id, "*") {
		return
	}
	level, _, ok := strings.Cut(rest, ";")
	if !ok || strings.ContainsAny(level, "()") {
		return
	}
	switch l := Level(level); l {
	case Must, MustNot, Should, ShouldNot, May:
		if _, dup := m[id]; !dup {
			m[strings.Clone(id)] = l
		}
	}
}

package spec

import (
	"bufio"
	"bytes"
	"io/fs"
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
// continuation lines only while the level is not read yet).
type lineIndexer struct {
	inFence, inItem bool
	item            []byte
}

// line reads one line. It allocates nothing: a requirement's ID becomes a
// string as finish indexes it.
func (ix *lineIndexer) line(line []byte, m map[string]Level) {
	trimmed := bytes.TrimSpace(line)
	cand := reqCandidate(line)
	if bytes.HasPrefix(line, []byte("  ")) && len(trimmed) > 0 && !cand {
		if ix.inItem && bytes.IndexByte(ix.item, ';') < 0 {
			ix.item = append(append(ix.item, ' '), trimmed...)
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
	if !ix.inFence && cand {
		ix.item, ix.inItem = append(ix.item[:0], line...), true
	}
}

// finish indexes the requirement item read so far, if any: "- **ID**
// (LEVEL; ...".
func (ix *lineIndexer) finish(m map[string]Level) {
	if !ix.inItem {
		return
	}
	ix.inItem = false
	rest, ok := bytes.CutPrefix(ix.item, []byte("- **"))
	if !ok {
		return
	}
	id, rest, ok := bytes.Cut(rest, []byte("** ("))
	if !ok || bytes.IndexByte(id, '*') >= 0 {
		return
	}
	level, _, ok := bytes.Cut(rest, []byte(";"))
	if !ok || bytes.ContainsAny(level, "()") {
		return
	}
	for _, l := range [...]Level{Must, MustNot, Should, ShouldNot, May} {
		if string(level) != string(l) {
			continue
		}
		if _, dup := m[string(id)]; !dup {
			m[string(id)] = l
		}
	}
}

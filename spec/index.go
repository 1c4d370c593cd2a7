package spec

import (
	"slices"
	"strings"
)

// levelEntry is one row of levelTable (levels.go): a requirement's ID and
// level.
type levelEntry struct {
	id    string
	level Level
}

//go:generate go run ./internal/genlevels

// LevelOf returns the level of the embedded requirement id, and whether
// the specification defines it. It reads levelTable, generated from the
// specification (go generate ./spec), so a program that only looks IDs up
// (the conformance catalog's checks, a report counting the requirements)
// neither parses the specification (Embedded) nor reads its Markdown.
func LevelOf(id string) (Level, bool) {
	i, ok := slices.BinarySearchFunc(levelTable[:], id, func(e levelEntry, id string) int { return strings.Compare(e.id, id) })
	if !ok {
		return "", false
	}
	return levelTable[i].level, true
}

// NumRequirements returns the number of requirements of the embedded
// specification (len(Requirements()), without parsing it).
func NumRequirements() int { return len(levelTable) }

package conformance

import (
	"reflect"
	"slices"
	"testing"
)

// TestInPlaceContextFields: sendWrite stores every field of sentCtx one
// by one rather than by a composite literal (built aside and copied): a
// field added to it keeps the previous write's value unless it is stored
// there too. This lists the fields it stores; add a new one there, then
// here.
func TestInPlaceContextFields(t *testing.T) {
	stored := []string{"judgedRow", "pt", "fl", "req", "r", "p", "psn", "ev", "t", "st", "acked", "isNew",
		"preCapture", "nack", "tracked", "timedOut", "size", "copyLike"}
	typ := reflect.TypeFor[sentCtx]()
	var got []string
	for i := range typ.NumField() {
		got = append(got, typ.Field(i).Name)
	}
	slices.Sort(got)
	slices.Sort(stored)
	if !slices.Equal(got, stored) {
		t.Errorf("sentCtx has fields %v; sendWrite stores %v", got, stored)
	}
}

package conformance

import (
	"reflect"
	"slices"
	"testing"
)

// TestInPlaceContextFields: sendWrite stores every field of sentCtx, and
// trigger every field of answerCtx, one by one rather than by a composite
// literal (built aside and copied): a field added to either keeps the
// previous write's or SACK's value unless it is stored there too. This
// lists the fields they store; add a new one there, then here.
func TestInPlaceContextFields(t *testing.T) {
	for _, c := range []struct {
		typ    reflect.Type
		stored []string
	}{
		{reflect.TypeFor[sentCtx](), []string{"judgedRow", "pt", "fl", "req", "r", "p", "psn", "ev", "t", "st", "acked", "isNew",
			"preCapture", "nack", "tracked", "timedOut", "size", "copyLike"}},
		{reflect.TypeFor[answerCtx](), []string{"judgedRow", "kind", "pt", "fl", "rsp", "s", "ev", "what", "a", "other",
			"evSeen", "neededAnswer", "unsure"}},
	} {
		var got []string
		for i := range c.typ.NumField() {
			got = append(got, c.typ.Field(i).Name)
		}
		slices.Sort(got)
		want := slices.Clone(c.stored)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v has fields %v; its in-place fill stores %v", c.typ, got, want)
		}
	}
}

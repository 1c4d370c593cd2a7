package layers_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"

	"github.com/openmrc/mrc/internal/layers"
)

// FuncName names functions and methods the way CPU profiles and the
// function-size rule do.
func ExampleFuncName() {
	src := `package p
func f() {}
func (t *T) m() {}
func (s Set[K, V]) add() {}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		panic(err)
	}
	for _, d := range f.Decls {
		fmt.Println(layers.FuncName(d.(*ast.FuncDecl)))
	}
	// Output:
	// f
	// T.m
	// Set.add
}

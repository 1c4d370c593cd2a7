package layers

import "go/ast"

// FuncName names a declared function as profiles and the function-size
// rule do: "f" for a function, "T.m" for a method of T, *T, T[P] or *T[P].
func FuncName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	for t := fd.Recv.List[0].Type; ; {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		default:
			return fd.Name.Name
		}
	}
}

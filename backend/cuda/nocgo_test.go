package cuda

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exportedAPI lists the exported declarations of the package's non-test files as the
// go tool selects them with cgo on or off: "func (*Device) Alloc(tensor.DType, int,
// int) (backend.Buffer, error)", "type Device", "var ErrNoDriver", ...
func exportedAPI(t *testing.T, cgo bool) []string {
	t.Helper()
	ctx := build.Default
	ctx.CgoEnabled = cgo
	pkg, err := ctx.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	files := append(append([]string(nil), pkg.GoFiles...), pkg.CgoFiles...)
	fset := token.NewFileSet()
	var api []string
	str := func(n any) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	types := func(fl *ast.FieldList) string {
		if fl == nil {
			return ""
		}
		var ts []string
		for _, f := range fl.List {
			n := max(len(f.Names), 1)
			for range n {
				ts = append(ts, str(f.Type))
			}
		}
		return "(" + strings.Join(ts, ", ") + ")"
	}
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				recv := ""
				if d.Recv != nil {
					recv = types(d.Recv) + " "
				}
				api = append(api, "func "+recv+d.Name.Name+types(d.Type.Params)+" "+types(d.Type.Results))
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							api = append(api, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								api = append(api, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(api)
	return api
}

// TestNoCgoAPI checks that the build without cgo (nocgo.go) declares exactly the
// exported API of the cgo build, so that code written against the package builds either
// way.
func TestNoCgoAPI(t *testing.T) {
	if _, err := os.Stat("nocgo.go"); err != nil {
		t.Skipf("the package's sources are not in the working directory: %v", err)
	}
	with, without := exportedAPI(t, true), exportedAPI(t, false)
	for _, s := range with {
		if _, found := slices.BinarySearch(without, s); !found {
			t.Errorf("missing without cgo: %s", s)
		}
	}
	for _, s := range without {
		if _, found := slices.BinarySearch(with, s); !found {
			t.Errorf("only without cgo: %s", s)
		}
	}
	if len(with) < 50 {
		t.Errorf("only %d exported declarations found with cgo", len(with))
	}
}

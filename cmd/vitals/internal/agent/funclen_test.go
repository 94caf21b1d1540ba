package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function of cmd/vitals outside tests: one that
// does not fit holds more than one thing, and is to be split (the wiring
// of the agent was once one function of 300 lines).
const maxFuncLines = 100

// A function's length is the lines of its body between its braces, as the
// funlen linter counts them.
func TestNoFunctionOfCmdVitalsIsLongerThan100Lines(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == "testdata" {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body = fn.Body
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			if lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line - 1; lines > maxFuncLines {
				t.Errorf("%s: a function of %d lines: split it (at most %d)", fset.Position(n.Pos()), lines, maxFuncLines)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

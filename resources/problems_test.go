package resources

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// declaredCodes parses the non-test Go files of the packages that answer
// codes and returns every code they declare: the string value of each
// constant named Code… or code…, and each string literal given as `Code:`
// in a composite literal.
func declaredCodes(t *testing.T) map[string]string {
	t.Helper()
	codes := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{".", "../api", "../tools", "../bunstore", "../cmd/platformapi"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool { collectCode(n, f, codes); return true })
		}
	}
	return codes
}

func collectCode(n ast.Node, file string, codes map[string]string) {
	switch x := n.(type) {
	case *ast.ValueSpec:
		for i, name := range x.Names {
			if i < len(x.Values) && (strings.HasPrefix(name.Name, "Code") || strings.HasPrefix(name.Name, "code")) &&
				!strings.HasPrefix(name.Name, "CodeKind") {
				if lit, ok := x.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					codes[v] = file + ": " + name.Name
				}
			}
		}
	case *ast.KeyValueExpr:
		if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Code" {
			if lit, ok := x.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				codes[v] = file + ": Code: literal"
			}
		}
	}
}

func TestProblems_EveryDeclaredCodeIsInTheCatalogue(t *testing.T) {
	t.Parallel()
	codes := declaredCodes(t)
	if len(codes) < 60 {
		t.Fatalf("found only %d codes: the scan is broken", len(codes))
	}
	for code, where := range codes {
		if _, ok := ProblemByCode(code); !ok {
			t.Errorf("%s (%s) is not in the problem-code catalogue (resources/problems.go)", code, where)
		}
	}
}

func TestProblems_CatalogueIsWellFormed(t *testing.T) {
	t.Parallel()
	ps := Problems()
	seen := map[string]bool{}
	for _, p := range ps {
		switch {
		case seen[p.Code]:
			t.Errorf("%s twice", p.Code)
		case p.Meaning == "":
			t.Errorf("%s has no meaning", p.Code)
		case p.Kind == CodeKindProblem && (p.Status < 400 || p.Status > 599):
			t.Errorf("%s: status %d", p.Code, p.Status)
		case p.Kind != CodeKindProblem && p.Status != 0:
			t.Errorf("%s: a %s has no status", p.Code, p.Kind)
		case p.Retry && p.Status != 408 && p.Status != 409 && p.Status != 429 && p.Status != 503:
			t.Errorf("%s: retry with status %d", p.Code, p.Status)
		}
		seen[p.Code] = true
	}
	if !slices.IsSortedFunc(ps, func(a, b ProblemCode) int { return strings.Compare(a.Code, b.Code) }) {
		t.Error("not sorted by code")
	}
}

// TestProblems_Title_ReasonPhraseElseTheCodeInWords: a code's title (RFC
// 9457: fixed for the problem type) is the reason phrase of its HTTP
// status, as REST problems have, else, for a code without one (an
// operation error, or one the catalogue does not hold), the code in words.
func TestProblems_Title_ReasonPhraseElseTheCodeInWords(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		CodeProjectRetired:       "Conflict",
		CodeNodeAgentNotEnrolled: "Conflict",
		CodeAIModelNotInStore:    "Conflict",
		CodePipelineFailed:       "Pipeline failed",
		CodeReleaseRejected:      "Release rejected",
		CodeNodeAgentUnreachable: "Node agent unreachable",
		CodeRequestCancelled:     "Request cancelled", // 499 has no reason phrase
		"no_such_code":           "No such code",
	} {
		if got := ProblemTitle(code); got != want {
			t.Errorf("%s: title %q, want %q", code, got, want)
		}
	}
	for _, c := range Problems() {
		if ProblemTitle(c.Code) == "" {
			t.Errorf("%s has no title", c.Code)
		}
	}
}

package kpca_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's Go quickstart is Example_quickstart's body: go test compiles
// and runs it (its output is checked), and this test keeps the two equal.
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	const marker = "<!-- Example_quickstart in models/kpca/example_readme_test.go"
	text := string(readme)
	i := strings.Index(text, marker)
	require.GreaterOrEqual(t, i, 0, "README lost the quickstart marker")
	text = text[i:]
	start := strings.Index(text, "```go\n")
	require.GreaterOrEqual(t, start, 0)
	text = text[start+len("```go\n"):]
	block := text[:strings.Index(text, "```")]

	src, err := os.ReadFile("example_readme_test.go")
	require.NoError(t, err)
	body := string(src)
	body = body[strings.Index(body, "func Example_quickstart() {\n")+len("func Example_quickstart() {\n"):]
	body = body[:strings.Index(body, "\t// Output:")]
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	require.Equal(t, strings.Join(lines, "\n")+"\n", block)

	// The output block after it is the Example's Output.
	out := text[strings.Index(text, "```\n\n```\n")+len("```\n\n```\n"):]
	out = out[:strings.Index(out, "```")]
	want := string(src)
	want = want[strings.Index(want, "// Output:\n")+len("// Output:\n"):]
	want = want[:strings.Index(want, "}")]
	var outLines []string
	for _, l := range strings.Split(strings.TrimRight(want, "\n\t"), "\n") {
		outLines = append(outLines, strings.TrimPrefix(strings.TrimSpace(l), "// "))
	}
	require.Equal(t, strings.Join(outLines, "\n")+"\n", out)
}

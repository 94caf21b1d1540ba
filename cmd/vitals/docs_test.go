//go:build !vitals_probe

package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	vitalsagent "github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/schematest"
)

// The documentation's promises about itself: every vitals.yaml it shows is
// one that vitals validate takes, and every link in it leads somewhere. The
// rules are docs/development.md's ("The documentation's own tests").

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// docsEnvironment is the environment the docs' vitals.yaml files are read
// in: the variables their ${VAR}s name, as a reader would set them. An
// example that names another variable fails until it is added here.
var docsEnvironment = map[string]string{
	"DB_PASSWORD": "db-password",
	"HOOK_TOKEN":  "hook-token",
	"MQ_PASSWORD": "mq-password",
}

// docValidations are what every vitals.yaml of the docs must pass, in order:
// each gets the block as a file of its own, named after the page, and says
// what is wrong with it. A config.Errors has its positions moved onto the
// page (see vitalsFile.onPage).
var docValidations = []struct {
	name     string
	validate func(name string, data []byte) error
}{
	{"vitals validate", validateAsValidateDoes},
	{"the schema", schematest.Validate},
}

// validateAsValidateDoes is vitals validate's path, in process: the loader,
// then agent.New, which builds everything vitals run builds from the file
// and starts nothing.
func validateAsValidateDoes(name string, data []byte) error {
	env := func(v string) (string, bool) { s, ok := docsEnvironment[v]; return s, ok }
	c, err := config.Parse(name, data, env, kinds.All)
	if err != nil {
		return err
	}
	if _, err := vitalsagent.New(c, vitalsagent.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		return err
	}
	return nil
}

func TestEveryVitalsYAMLOfTheDocsValidates(t *testing.T) {
	pages := markdownPages(t)
	validated := map[string]int{}
	for _, page := range pages {
		_, blocks, err := readPage(t, page)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range blocks {
			what, err := classify(b)
			if err != nil {
				t.Errorf("%s:%d: %v", page, b.line, err)
				continue
			}
			f, ok := vitalsFileOf(b, what)
			if !ok {
				continue
			}
			validated[page]++
			for _, v := range docValidations {
				if err := v.validate(page, []byte(f.text)); err != nil {
					t.Errorf("%s:%d: a %s that %s refuses:\n%v", page, b.line, what, v.name, f.onPage(err))
				}
			}
		}
	}
	// The README shows one vitals.yaml, and the reference one example per
	// kind: none found is a reader of fences that went wrong.
	if validated["README.md"] == 0 {
		t.Errorf("no vitals.yaml found in README.md")
	}
	if n := validated[filepath.Join("docs", "reference", "config.md")]; n < len(kinds.All) {
		t.Errorf("%d examples of kinds found in docs/reference/config.md, want %d", n, len(kinds.All))
	}
	t.Logf("validated: %v", validated)
}

func TestEveryRelativeLinkOfTheDocsLeadsSomewhere(t *testing.T) {
	anchors := map[string][]string{} // a page's anchors, read once
	anchorsOf := func(page string) []string {
		if a, ok := anchors[page]; ok {
			return a
		}
		prose, _, _ := readPage(t, page) // an unclosed block is the other test's
		anchors[page] = headingAnchors(prose)
		return anchors[page]
	}
	checked := 0
	for _, page := range markdownPages(t) {
		prose, _, _ := readPage(t, page)
		for _, l := range links(prose) {
			target, ok := relative(l.target)
			if !ok {
				continue
			}
			checked++
			if err := leadsSomewhere(page, target, anchorsOf); err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found: the reader of links went wrong")
	}
}

// leadsSomewhere says what is wrong with a relative link of page, if
// anything: the file it names must exist in the repository, and a heading
// it names must be in that file.
func leadsSomewhere(page string, target *url.URL, anchorsOf func(string) []string) error {
	file := page
	if target.Path != "" {
		file = filepath.Join(filepath.Dir(page), filepath.FromSlash(target.Path))
		if file == ".." || strings.HasPrefix(file, ".."+string(filepath.Separator)) {
			return errors.New("it leads out of the repository")
		}
	}
	fi, err := os.Stat(filepath.Join(repoRoot, file))
	if err != nil {
		return fmt.Errorf("no such file or directory: %s", file)
	}
	anchor := target.Fragment
	switch {
	case anchor == "":
		return nil
	case fi.IsDir():
		return fmt.Errorf("#%s on a directory", anchor)
	case strings.HasSuffix(file, ".md"):
		if !slices.Contains(anchorsOf(file), anchor) {
			return fmt.Errorf("no heading of %s has the anchor #%s", file, anchor)
		}
		return nil
	}
	// GitHub's anchors of a source file are its lines: #L10, #L10-L20.
	m := lineAnchor.FindStringSubmatch(anchor)
	if m == nil {
		return fmt.Errorf("#%s: a file that is not Markdown has line anchors only (#L10)", anchor)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		return err
	}
	lines := strings.Count(string(data), "\n")
	for _, n := range m[1:] {
		if i, _ := strconv.Atoi(n); n != "" && (i < 1 || i > lines) {
			return fmt.Errorf("%s has %d lines, not line %s", file, lines, n)
		}
	}
	return nil
}

var lineAnchor = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)

// readPage reads a page of the repository, by its path from the root.
func readPage(t *testing.T, page string) ([]numbered, []fence, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	return markdown(page, string(data))
}

// markdownPages are the repository's Markdown files, from its root: the
// README and docs/ first among them.
func markdownPages(t *testing.T) []string {
	var pages []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", filepath.Join("docs", "README.md")} {
		if !slices.Contains(pages, want) {
			t.Fatalf("%s is missing", want)
		}
	}
	return pages
}

// A fence is a fenced code block of a Markdown page.
type fence struct {
	line   int    // the line of the opening fence
	info   string // its info string's first word: yaml, sh, text...
	indent int    // the opening fence's indentation, which its lines lose
	text   string // its lines, without the fences
}

var openingFence = regexp.MustCompile("^( *)(```+|~~~+)\\s*([^`\\s]*)")

// A numbered line is a line of a page outside its code blocks.
type numbered struct {
	n    int
	text string
}

// markdown reads a page as CommonMark does as far as these tests need: its
// fenced code blocks (a closing fence is the opening one's character, at
// least as many times, and nothing else on its line; a block's lines lose up
// to the fence's indentation), and the lines outside them.
func markdown(page, text string) (prose []numbered, blocks []fence, err error) {
	var (
		open  *fence
		mark  string
		lines []string
	)
	for i, l := range strings.Split(text, "\n") {
		if open == nil {
			if m := openingFence.FindStringSubmatch(l); m != nil {
				open = &fence{line: i + 1, info: strings.ToLower(m[3]), indent: len(m[1])}
				mark, lines = m[2], nil
			} else {
				prose = append(prose, numbered{i + 1, l})
			}
			continue
		}
		if t := strings.TrimSpace(l); strings.HasPrefix(t, mark) && strings.Trim(t, mark[:1]) == "" {
			open.text = strings.Join(lines, "\n") + "\n"
			blocks = append(blocks, *open)
			open = nil
			continue
		}
		lines = append(lines, l[min(open.indent, len(l)-len(strings.TrimLeft(l, " "))):])
	}
	if open != nil {
		return prose, blocks, fmt.Errorf("%s:%d: a code block that is never closed", page, open.line)
	}
	return prose, blocks, nil
}

// What a code block of YAML is; see classify.
const (
	vitalsYAML         = "vitals.yaml"
	kindExample        = "check's kind"
	kubernetesManifest = "Kubernetes manifest"
	kubernetesPart     = "part of a Kubernetes manifest"
	pebbleLayer        = "Pebble layer"
	notYAML            = "block of another language"
)

// classify says what a code block is, by docs/development.md's rule. A YAML
// block (```yaml or ```yml) is, in this order:
//
//   - a vitals.yaml when its first line is a comment that begins "# vitals.yaml";
//   - part of a Kubernetes manifest when its first line is a comment that
//     begins "# Kubernetes" (a container's probes, a pod's spec);
//   - a Kubernetes manifest when each of its documents has apiVersion and kind;
//   - a Pebble layer when it has services: or checks: whose every entry has
//     override: (which Pebble's layers require);
//   - a check's kind when it is one key, a kind's name (the reference's
//     examples), which is validated as the kind of a check;
//   - else a vitals.yaml.
//
// So a block is not validated only when it says, or shows, what else it is.
// A block that says it is something else but has only vitals.yaml's keys,
// and a block of another language that has vitals.yaml's keys and checks: or
// service:, are errors: each is a vitals.yaml that would go unvalidated.
func classify(b fence) (string, error) {
	if b.info != "yaml" && b.info != "yml" {
		if keys, ok := topKeys(b.text); ok && len(keys) == 1 && onlyVitalsKeys(keys[0]) &&
			(slices.Contains(keys[0], "checks") || slices.Contains(keys[0], "service")) {
			return notYAML, fmt.Errorf("a vitals.yaml in a block of %q: fence it as ```yaml, so that it is validated", cmp.Or(b.info, "no language"))
		}
		return notYAML, nil
	}
	first, _, _ := strings.Cut(strings.TrimSpace(b.text), "\n")
	if strings.HasPrefix(first, "# vitals.yaml") {
		return vitalsYAML, nil
	}
	docs, parsed := topKeys(b.text)
	if strings.HasPrefix(first, "# Kubernetes") {
		if !parsed {
			return kubernetesPart, errors.New("a block marked # Kubernetes that is not YAML of mappings")
		}
		if len(docs) == 1 && onlyVitalsKeys(docs[0]) {
			return kubernetesPart, fmt.Errorf("a block marked %q has only vitals.yaml's keys (%s): it is a vitals.yaml, so mark it # vitals.yaml", first, strings.Join(docs[0], ", "))
		}
		return kubernetesPart, nil
	}
	if !parsed {
		return vitalsYAML, nil // the loader says what is wrong with it
	}
	if len(docs) > 0 && !slices.ContainsFunc(docs, func(keys []string) bool {
		return !slices.Contains(keys, "apiVersion") || !slices.Contains(keys, "kind")
	}) {
		return kubernetesManifest, nil
	}
	if len(docs) == 1 && pebbleLike(b.text) {
		return pebbleLayer, nil
	}
	if len(docs) == 1 && len(docs[0]) == 1 && kinds.All.Lookup(docs[0][0]) != nil {
		return kindExample, nil
	}
	return vitalsYAML, nil
}

// onlyVitalsKeys reports whether keys are all keys of vitals.yaml's top level.
func onlyVitalsKeys(keys []string) bool {
	top := config.Sections()[0].Fields
	return !slices.ContainsFunc(keys, func(k string) bool {
		return !slices.ContainsFunc(top, func(f config.Field) bool { return f.Key == k })
	})
}

// topKeys returns the keys of the top-level mapping of each document of a
// YAML text; false when it is not YAML, or a document is no mapping.
func topKeys(text string) ([][]string, bool) {
	f, err := parser.ParseBytes([]byte(text), 0)
	if err != nil {
		return nil, false
	}
	var docs [][]string
	for _, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		m, ok := mapping(d.Body)
		if !ok {
			return nil, false
		}
		var keys []string
		for _, kv := range m.Values {
			keys = append(keys, keyName(kv.Key))
		}
		docs = append(docs, keys)
	}
	return docs, true
}

// keyName is a mapping's key as YAML reads it: without its quotes.
func keyName(k ast.MapKeyNode) string {
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return k.String()
}

// mapping is n as a mapping, past comments and anchors.
func mapping(n ast.Node) (*ast.MappingNode, bool) {
	for {
		switch v := n.(type) {
		case *ast.MappingNode:
			return v, true
		case *ast.MappingValueNode: // a mapping of one key
			return &ast.MappingNode{Values: []*ast.MappingValueNode{v}}, true
		case *ast.CommentGroupNode:
			return nil, false
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return nil, false
		}
	}
}

// pebbleLike reports whether a YAML text is a Pebble layer: services: or
// checks: whose every entry has override:.
func pebbleLike(text string) bool {
	f, err := parser.ParseBytes([]byte(text), 0)
	if err != nil || len(f.Docs) != 1 {
		return false
	}
	top, ok := mapping(f.Docs[0].Body)
	if !ok {
		return false
	}
	found := false
	for _, kv := range top.Values {
		if k := keyName(kv.Key); k != "services" && k != "checks" {
			continue
		}
		entries, ok := mapping(kv.Value)
		if !ok || len(entries.Values) == 0 {
			return false
		}
		for _, e := range entries.Values {
			fields, ok := mapping(e.Value)
			if !ok || !slices.ContainsFunc(fields.Values, func(f *ast.MappingValueNode) bool { return keyName(f.Key) == "override" }) {
				return false
			}
		}
		found = true
	}
	return found
}

// A vitalsFile is a block as the file that the validations read, and how
// its positions map onto the page.
type vitalsFile struct {
	text        string
	block       fence
	wrapLines   int // lines added above the block's
	wrapColumns int // columns added before each of the block's lines
}

// kindWrap makes a kind's example a file: the kind of the one check.
const kindWrap = "checks:\n  example:\n"

// vitalsFileOf is the file a block is, when it is a vitals.yaml or a kind.
func vitalsFileOf(b fence, what string) (vitalsFile, bool) {
	switch what {
	case vitalsYAML:
		return vitalsFile{text: b.text, block: b}, true
	case kindExample:
		var s strings.Builder
		s.WriteString(kindWrap)
		for l := range strings.SplitSeq(strings.TrimSuffix(b.text, "\n"), "\n") {
			s.WriteString("    " + l + "\n")
		}
		return vitalsFile{text: s.String(), block: b, wrapLines: strings.Count(kindWrap, "\n"), wrapColumns: 4}, true
	}
	return vitalsFile{}, false
}

// onPage moves the positions of a loader's errors from the file onto the
// page: the line below the opening fence is the file's line 1.
func (f vitalsFile) onPage(err error) error {
	var errs config.Errors
	if !errors.As(err, &errs) {
		return err
	}
	moved := make(config.Errors, len(errs))
	for i, e := range errs {
		if e.Line > 0 {
			e.Line = max(e.Line-f.wrapLines, 0) + f.block.line
			e.Column = max(e.Column-f.wrapColumns, 1) + f.block.indent
		}
		moved[i] = e
	}
	return moved
}

// A link is a Markdown link's target, and its line.
type link struct {
	target string
	line   int
}

var (
	inlineLink    = regexp.MustCompile(`!?\[[^\]]*\]\(\s*(<[^>]*>|[^()\s]+)(?:\s+"[^"]*")?\s*\)`)
	referenceLink = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	htmlLink      = regexp.MustCompile(`(?i)<(?:a|img)\s[^>]*?(?:href|src)="([^"]*)"`)
	codeSpan      = regexp.MustCompile("(`+)[^`].*?(`+)")
)

// links returns the links of a page's lines outside code blocks and code
// spans.
func links(prose []numbered) []link {
	var out []link
	for _, l := range prose {
		text := codeSpan.ReplaceAllString(l.text, "")
		for _, re := range []*regexp.Regexp{inlineLink, referenceLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				out = append(out, link{strings.Trim(m[1], "<>"), l.n})
			}
		}
	}
	return append(out, wrappedLinks(prose)...)
}

// wrappedLinks are the inline links whose text goes on over more than one
// line (a long image's alt text), read across each paragraph's lines, at
// the line where each begins; links within one line are links's.
func wrappedLinks(prose []numbered) []link {
	var out []link
	for i := 0; i < len(prose); {
		var joined strings.Builder
		var starts []int // the offset in joined of each line of the paragraph
		j := i
		for ; j < len(prose) && strings.TrimSpace(prose[j].text) != "" && (j == i || prose[j].n == prose[j-1].n+1); j++ {
			starts = append(starts, joined.Len())
			joined.WriteString(codeSpan.ReplaceAllString(prose[j].text, "") + " ")
		}
		if j == i {
			j++ // a blank line
		}
		text := joined.String()
		for _, m := range inlineLink.FindAllStringSubmatchIndex(text, -1) {
			first, last := lineAt(starts, m[0]), lineAt(starts, m[1]-1)
			if first != last {
				out = append(out, link{strings.Trim(text[m[2]:m[3]], "<>"), prose[i+first].n})
			}
		}
		i = j
	}
	return out
}

// lineAt is the index of the line of starts that offset falls in.
func lineAt(starts []int, offset int) int {
	k := 0
	for k+1 < len(starts) && starts[k+1] <= offset {
		k++
	}
	return k
}

// relative parses a link's target when it is one within the repository:
// not a URL with a scheme (https:, mailto:) or a host.
func relative(target string) (*url.URL, bool) {
	u, err := url.Parse(target)
	if err != nil {
		return &url.URL{Path: target}, true // leadsSomewhere says it leads nowhere
	}
	return u, u.Scheme == "" && u.Host == ""
}

var atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)

// headingAnchors are the anchors of a page's headings, as GitHub makes them
// (github-slugger): the heading's text, lower case, without punctuation but
// - and _, spaces as -; a repeated one gets -1, -2... Explicit <a id> and
// <a name> anchors count too.
func headingAnchors(prose []numbered) []string {
	var anchors []string
	seen := map[string]int{}
	for _, l := range prose {
		for _, m := range explicitAnchor.FindAllStringSubmatch(l.text, -1) {
			anchors = append(anchors, m[1])
		}
		m := atxHeading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		slug := slugOf(m[1])
		if n := seen[slug]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", slug, n))
		} else {
			anchors = append(anchors, slug)
		}
		seen[slug]++
	}
	return anchors
}

var (
	explicitAnchor = regexp.MustCompile(`(?i)<a\s[^>]*?(?:id|name)="([^"]+)"`)
	linkText       = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag        = regexp.MustCompile(`<[^>]+>`)
)

// slugOf is GitHub's anchor of a heading's Markdown: of its text as shown.
func slugOf(heading string) string {
	shown := htmlTag.ReplaceAllString(linkText.ReplaceAllString(heading, "$1"), "")
	var b strings.Builder
	for _, r := range strings.ToLower(shown) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', unicode.IsLetter(r), unicode.IsMark(r), unicode.IsNumber(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestTheRuleSaysWhichBlocksAreAVitalsYAML(t *testing.T) {
	for _, tc := range []struct {
		info, text string
		want       string
		err        string // in the error; "" for none
	}{
		{"yaml", "# vitals.yaml\nchecks:\n  db: {tcp: {address: db:5432}}\n", vitalsYAML, ""},
		{"yaml", "checks:\n  db: {tcp: {address: db:5432}}\n", vitalsYAML, ""},
		{"yml", "listen: :8558\n", vitalsYAML, ""},
		{"yaml", "# vitals.yaml, though it says apiVersion\napiVersion: v1\nkind: Pod\n", vitalsYAML, ""},
		{"yaml", "checks: [unclosed\n", vitalsYAML, ""}, // the loader says what is wrong
		{"yaml", "a list, not a mapping", vitalsYAML, ""},
		{"yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: app}\n", kubernetesManifest, ""},
		{"yaml", "apiVersion: v1\nkind: ServiceAccount\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n", kubernetesManifest, ""},
		{"yaml", "apiVersion: v1\nkind: Pod\n---\nchecks: {}\n", vitalsYAML, ""}, // a document without kind
		{"yaml", "# Kubernetes: a container's probes\nlivenessProbe:\n  grpc: {port: 8559}\n", kubernetesPart, ""},
		{"yaml", "# Kubernetes: a fragment\nspec: [unclosed\n", kubernetesPart, "not YAML"},
		{"yaml", "# Kubernetes: but it is not\nchecks:\n  db: {tcp: {address: db:5432}}\n", kubernetesPart, "it is a vitals.yaml"},
		{"yaml", "services:\n  app: {override: replace, command: app}\nchecks:\n  up: {override: replace, tcp: {port: 80}}\n", pebbleLayer, ""},
		{"yaml", "checks:\n  up: {override: replace, tcp: {port: 80}}\n", pebbleLayer, ""},
		{"yaml", "checks:\n  up: {tcp: {address: localhost:80}}\n  down: {override: replace}\n", vitalsYAML, ""},
		{"yaml", "http: {url: http://localhost:8080/healthz}\n", kindExample, ""},
		{"yaml", "kubernetes: {events: true}\n", vitalsYAML, ""}, // a top-level key, not a kind
		{"sh", "vitals validate -c vitals.yaml\n", notYAML, ""},
		{"text", "Events:\n  Type  Reason\n", notYAML, ""},
		{"", "checks:\n  db: {tcp: {address: db:5432}}\n", notYAML, "fence it as ```yaml"},
		{"json", "{\"service\": {\"command\": [\"app\"]}}\n", notYAML, "fence it as ```yaml"},
	} {
		got, err := classify(fence{info: tc.info, text: tc.text})
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("```%s\n%s```\nis %q, %v; want %q, an error with %q", tc.info, tc.text, got, err, tc.want, tc.err)
		}
	}
}

func TestAnErrorOfABlockIsWhereItIsOnThePage(t *testing.T) {
	page := "# a page\n\n- a list item:\n\n  ```yaml\n  checks:\n    db: {tcp: {address: nowhere}}\n  ```\n\n```yaml\nhttp: {url: 'ftp://x'}\n```\n"
	_, blocks, err := markdown("page.md", page)
	if err != nil || len(blocks) != 2 {
		t.Fatalf("%d blocks, %v; want 2", len(blocks), err)
	}
	var got []string
	for _, b := range blocks {
		what, err := classify(b)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := vitalsFileOf(b, what)
		if !ok {
			t.Fatalf("block at line %d is a %s, not validated", b.line, what)
		}
		err = validateAsValidateDoes("page.md", []byte(f.text))
		if err == nil {
			t.Fatalf("block at line %d validates", b.line)
		}
		got = append(got, strings.SplitN(f.onPage(err).Error(), ": ", 2)[0])
	}
	// The tcp: on line 7, column 15 (past the list item's two spaces); the
	// url on line 11, column 7.
	if want := []string{"page.md:7:15", "page.md:11:7"}; !slices.Equal(got, want) {
		t.Errorf("errors at %q, want %q", got, want)
	}
}

func TestAnchorsAreGitHubs(t *testing.T) {
	prose, _, err := markdown("page.md", "# The agent: `vitals run`\n## Waiting for Kubernetes objects: `vitals wait k8s://…`\n"+
		"### Semantics\n### Semantics\n#### The one-shot CLI — and [links](x.md) #\n```\n# not a heading\n```\n"+
		"<a id=\"exit-codes\"></a>\n## snake_case and 3.5× 200/503\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"the-agent-vitals-run", "waiting-for-kubernetes-objects-vitals-wait-k8s", "semantics", "semantics-1",
		"the-one-shot-cli--and-links", "exit-codes", "snake_case-and-35-200503"}
	if got := headingAnchors(prose); !slices.Equal(got, want) {
		t.Errorf("anchors %q, want %q", got, want)
	}
}

// A link is read within its line, or across the lines of its paragraph
// when its text goes on (at the line it begins); never across a blank line,
// nor in a code span.
func TestLinksAreReadAcrossTheLinesOfAParagraph(t *testing.T) {
	prose := []numbered{
		{1, "See [the docs](docs/a.md) and ![a long"},
		{2, "alt text](images/b.png), and `[not](c.md)`."},
		{3, ""},
		{4, "[broken"},
		{6, "by a block](d.md)"},
		{7, "[ok](e.md#x) [split"},
		{8, ""},
		{9, "apart](f.md)"},
	}
	var got []string
	for _, l := range links(prose) {
		got = append(got, fmt.Sprintf("%d:%s", l.line, l.target))
	}
	slices.Sort(got)
	if want := []string{"1:docs/a.md", "1:images/b.png", "7:e.md#x"}; !slices.Equal(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
}

// Command sizes says where the bytes and the start of vitals's release build
// go, as Markdown for BENCHMARKS.md:
//
//	cd bench && go run ./sizes    # about 15 seconds with a warm build cache: two builds of vitals
//
// It builds vitals from cmd/vitals as hack/release.sh does (CGO_ENABLED=0,
// -tags grpcnotrace, -trimpath, -ldflags='-s -w') and once more without -s -w,
// whose symbol table `go tool nm -size` reads, and prints:
//   - both sizes, the stripped build's sections, and how many modules
//     `go version -m` lists as dependencies;
//   - the symbols' bytes summed by module and by package (the top -top of
//     each): text, read-only data and data, not bss, which takes no bytes in
//     the file; the linker's own data (go:func.*, go:string.*) and anything
//     else nm names without a package are a row of their own, and the
//     function table (.gopclntab) is in no symbol;
//   - the package inits of `GODEBUG=inittrace=1 vitals version`, the start
//     every command pays before main: their sum, and the top -inits by clock
//     time and by bytes allocated, medians of -runs runs.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

func main() {
	top := flag.Int("top", 25, "modules and packages listed by bytes")
	inits := flag.Int("inits", 15, "package inits listed by clock time and by bytes")
	runs := flag.Int("runs", 15, "runs of `vitals version` for the inits' medians")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *top, *inits, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "sizes:", err)
		os.Exit(1)
	}
}

// releaseTags are hack/release.sh's tags for the full build.
const releaseTags = "grpcnotrace"

func run(ctx context.Context, w io.Writer, top, inits, runs int) error {
	work, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil || len(bytes.TrimSpace(work)) == 0 {
		return fmt.Errorf("run sizes in the vitals repository, whose go.work holds bench (go env GOWORK: %v)", err)
	}
	root := filepath.Dir(string(bytes.TrimSpace(work)))
	dir, err := os.MkdirTemp("", "vitals-sizes")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stripped, err := build(ctx, root, filepath.Join(dir, "vitals"), "-s -w")
	if err != nil {
		return err
	}
	symbols, err := build(ctx, root, filepath.Join(dir, "vitals-symbols"), "")
	if err != nil {
		return err
	}

	out, err := exec.CommandContext(ctx, "go", "version", "-m", stripped).Output()
	if err != nil {
		return fmt.Errorf("go version -m %s: %w", stripped, err)
	}
	goVersion, modules := readBuildInfo(out)
	fmt.Fprintf(w, "vitals's release build (%s, CGO_ENABLED=0, -tags %s -trimpath -ldflags='-s -w'), linux/amd64:\n\n", goVersion, releaseTags)
	fmt.Fprintf(w, "- %s stripped; %s with its symbol table and DWARF (the same build without -s -w)\n", harness.MiB(size(stripped)), harness.MiB(size(symbols)))
	if err := printSections(w, stripped); err != nil {
		return err
	}
	fmt.Fprintf(w, "- %d modules as dependencies (`go version -m`: dep lines), besides the main module\n\n", len(modules)-1)

	if err := printSymbols(ctx, w, symbols, modules, top); err != nil {
		return err
	}
	return printInits(ctx, w, stripped, modules, inits, runs)
}

// build builds cmd/vitals into out as the releases are built, with ldflags.
func build(ctx context.Context, root, out, ldflags string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "-tags", releaseTags, "-trimpath", "-ldflags="+ldflags, ".")
	cmd.Dir = filepath.Join(root, "cmd", "vitals")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", out, err, b)
	}
	return out, nil
}

// readBuildInfo returns the Go version and the module paths (the main
// module's first) that `go version -m` printed.
func readBuildInfo(out []byte) (goVersion string, modules []string) {
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 2 && (f[0] == "mod" || f[0] == "dep"):
			modules = append(modules, f[1])
		}
	}
	return goVersion, modules
}

// A tally is bytes summed under one name.
type tally struct {
	name  string
	bytes int64
}

func printSymbols(ctx context.Context, w io.Writer, bin string, modules []string, top int) error {
	out, err := exec.CommandContext(ctx, "go", "tool", "nm", "-size", "-sort", "size", bin).Output()
	if err != nil {
		return fmt.Errorf("go tool nm %s: %w", bin, err)
	}
	inFile, err := fileRanges(bin)
	if err != nil {
		return err
	}
	byPackage, byModule := map[string]int64{}, map[string]int64{}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// "  addr size type name", the name possibly with spaces.
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		n, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || !inFile(addr) {
			continue // bss (nm says D of .noptrbss too) takes no bytes in the file
		}
		pkg := packageOf(strings.Join(f[3:], " "))
		byPackage[pkg] += n
		byModule[moduleOf(pkg, modules)] += n
		total += n
	}
	fmt.Fprintf(w, "Symbols (`go tool nm -size` of the build with its symbol table, not bss; .gopclntab's bytes are in none): %s in all.\n\n", harness.MiB(total))
	for _, t := range []struct {
		what string
		of   map[string]int64
	}{{"module", byModule}, {"package", byPackage}} {
		fmt.Fprintf(w, "| %s | bytes | share |\n|---|---:|---:|\n", t.what)
		for _, e := range sorted(t.of)[:min(top, len(t.of))] {
			fmt.Fprintf(w, "| %s | %s | %.1f%% |\n", e.name, kib(e.bytes), 100*float64(e.bytes)/float64(total))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// fileRanges returns whether an address of bin is in a section with bytes in
// the file (not .bss or .noptrbss).
func fileRanges(bin string) (func(addr uint64) bool, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var in []*elf.Section
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS {
			in = append(in, s)
		}
	}
	return func(addr uint64) bool {
		return slices.ContainsFunc(in, func(s *elf.Section) bool { return s.Addr <= addr && addr < s.Addr+s.Size })
	}, nil
}

// printSections writes the sizes of bin's sections that take bytes in the
// file: the code, the read-only data, the function table (.gopclntab, which
// grows with the code) and the data.
func printSections(w io.Writer, bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	var parts []string
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Size >= 64<<10 {
			parts = append(parts, fmt.Sprintf("%s %s", s.Name, harness.MiB(s.Size)))
		}
	}
	fmt.Fprintf(w, "- its sections of 64 KiB or more: %s\n", strings.Join(parts, ", "))
	return nil
}

// noPackage is where symbols without a package go: the linker's data
// (go:func.*, go:string.*) and types that belong to
// none (map[string]int, func(…)).
const noPackage = "(the linker's tables, types of no package)"

// packageOf returns the package a symbol belongs to: its name up to the first
// dot after the last slash, with type:, go:itab. and pointers taken off.
func packageOf(sym string) string {
	n := strings.TrimPrefix(sym, "type:")
	n = strings.TrimPrefix(n, "go:itab.")
	for _, p := range []string{".eq.", ".hash.", ".namedata.", "*", "[]"} {
		for strings.HasPrefix(n, p) {
			n = n[len(p):]
		}
	}
	if strings.HasPrefix(n, "go:") || strings.HasPrefix(n, "map[") || strings.HasPrefix(n, "func(") ||
		strings.HasPrefix(n, "struct {") || strings.HasPrefix(n, "noalg.") || strings.HasPrefix(n, "interface {") {
		return noPackage
	}
	head := n
	if i := strings.IndexAny(head, "[(,"); i >= 0 {
		head = head[:i]
	}
	slash := strings.LastIndexByte(head, '/')
	dot := strings.IndexByte(head[slash+1:], '.')
	if dot < 0 {
		return noPackage
	}
	// The linker writes the dots of a path's last element as %2e
	// (gopkg.in/yaml%2ev3), so the first dot after the last slash ends it.
	pkg := strings.ReplaceAll(head[:slash+1+dot], "%2e", ".")
	return pkg
}

// moduleOf returns the module that holds pkg: the longest module path it is
// under, or the standard library when its first element has no dot.
func moduleOf(pkg string, modules []string) string {
	if pkg == noPackage {
		return pkg
	}
	best := ""
	for _, m := range modules {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best != "" {
		return best
	}
	if first, _, _ := strings.Cut(pkg, "/"); !strings.Contains(first, ".") {
		return "(standard library)"
	}
	return pkg
}

// An init is one package's init as inittrace reports it.
type packageInit struct {
	pkg          string
	clock        float64 // ms
	bytes, alloc int64
}

func printInits(ctx context.Context, w io.Writer, bin string, modules []string, top, runs int) error {
	clocks := map[string][]float64{}
	allocs := map[string][]int64{}
	var sums []float64
	var sumBytes []int64
	var inits int
	for range runs {
		cmd := exec.CommandContext(ctx, bin, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("GODEBUG=inittrace=1 %s version: %w\n%s", bin, err, stderr.String())
		}
		trace, err := readInittrace(stderr.String())
		if err != nil {
			return err
		}
		var sum float64
		var b int64
		for _, in := range trace {
			clocks[in.pkg] = append(clocks[in.pkg], in.clock)
			allocs[in.pkg] = append(allocs[in.pkg], in.bytes)
			sum += in.clock
			b += in.bytes
		}
		sums, sumBytes, inits = append(sums, sum), append(sumBytes, b), len(trace)
	}
	fmt.Fprintf(w, "Package inits (`GODEBUG=inittrace=1 vitals version`, medians of %d runs): %d inits, %.2f ms of clock time and %s allocated in all.\n\n",
		runs, inits, harness.Median(sums), kib(harness.Median(sumBytes)))
	var byClock []packageInit
	for pkg, cs := range clocks {
		byClock = append(byClock, packageInit{pkg: pkg, clock: harness.Median(cs), bytes: harness.Median(allocs[pkg])})
	}
	for _, order := range []struct {
		what string
		cmp  func(a, b packageInit) int
	}{
		{"clock time", func(a, b packageInit) int { return cmp.Or(cmp.Compare(b.clock, a.clock), cmp.Compare(a.pkg, b.pkg)) }},
		{"bytes allocated", func(a, b packageInit) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.pkg, b.pkg)) }},
	} {
		slices.SortFunc(byClock, order.cmp)
		fmt.Fprintf(w, "Top %d by %s:\n\n| package | module | clock | allocated |\n|---|---|---:|---:|\n", top, order.what)
		for _, in := range byClock[:min(top, len(byClock))] {
			fmt.Fprintf(w, "| %s | %s | %.3f ms | %s |\n", in.pkg, moduleOf(in.pkg, modules), in.clock, kib(in.bytes))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// readInittrace reads the lines "init PKG @T ms, C ms clock, B bytes, A
// allocs" of stderr.
func readInittrace(stderr string) ([]packageInit, error) {
	var trace []packageInit
	for line := range strings.Lines(stderr) {
		rest, ok := strings.CutPrefix(line, "init ")
		if !ok {
			continue
		}
		var in packageInit
		var at float64
		var allocs int64
		if _, err := fmt.Sscanf(rest, "%s @%f ms, %f ms clock, %d bytes, %d allocs", &in.pkg, &at, &in.clock, &in.bytes, &allocs); err != nil {
			return nil, fmt.Errorf("an inittrace line %q: %w", strings.TrimSpace(line), err)
		}
		in.pkg = strings.ReplaceAll(in.pkg, "%2e", ".") // as in symbols: gopkg.in/yaml%2ev3
		trace = append(trace, in)
	}
	if len(trace) == 0 {
		return nil, errors.New("GODEBUG=inittrace=1 printed no init")
	}
	return trace, nil
}

func sorted(m map[string]int64) []tally {
	var ts []tally
	for name, b := range m {
		ts = append(ts, tally{name, b})
	}
	slices.SortFunc(ts, func(a, b tally) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.name, b.name)) })
	return ts
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0 // just built: not reached
	}
	return fi.Size()
}

// kib writes bytes in KiB (2^10), whole: "1234 KiB".
func kib(b int64) string { return strconv.FormatInt((b+512)>>10, 10) + " KiB" }

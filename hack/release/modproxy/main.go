// Command modproxy writes a Go module proxy of this repository's modules, as
// they are in the work tree, at the version they require each other at: the
// next release, which no proxy serves until it is tagged.
//
//	go run ./hack/release/modproxy DIR
//
// DIR is then a GOPROXY=file://DIR that serves every module of go.work
// (github.com/vitals-dev/vitals, …/grpchealth, …/cmd/vitals, …) at that
// version, in the layout the go command reads. Each module's zip holds the
// files git knows in its directory (tracked, or untracked and not ignored,
// as a tag would once they are committed), less its nested modules, as
// golang.org/x/mod/zip makes it by the rules of module zips. With it, a module
// can be tidied alone, without go.work and without a replace (hack/tidy.sh),
// and go install …/cmd/vitals@VERSION can be tried before the tag exists.
//
// It prints the modules it wrote, one path@version a line.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: modproxy DIR\n\nwrites a GOPROXY=file://DIR of the modules of go.work, from the work tree, at the version they require each other at")
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	root, err := repositoryRoot(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	version, paths, err := writeProxy(root, flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	for _, p := range paths {
		fmt.Println(p + "@" + version)
	}
}

// Command printversion prints version.Version, for the test that stamps it
// with the linker's -X as a release build does.
package main

import (
	"fmt"

	"github.com/vitals-dev/vitals/version"
)

func main() { fmt.Println(version.Version) }

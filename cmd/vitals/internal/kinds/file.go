package kinds

import (
	"fmt"
	"strings"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// File is a file that must exist, and be as the block says.
var File = define(Kind{
	Name:          "file",
	Summary:       "A file that exists: optionally regular, non-empty, recent, or with content matching a pattern.",
	Example:       "{path: /etc/hostname}",
	ComponentType: health.ComponentTypeComponent, // a file the workload makes or needs
	CLI:           fileCLI,
}, block[probe.FileSpec]{
	fields: func(s *probe.FileSpec) []config.Field {
		return []config.Field{
			{Key: "path", Value: config.CString(&s.Path), Required: true,
				Doc: "Required: the file, absolute or relative to vitals's working directory; symbolic links are followed."},
			{Key: "non-empty", Value: config.Bool(&s.NonEmpty), Default: "false",
				Doc: "A regular file's size above zero, a directory with an entry."},
			{Key: "regular", Value: config.Bool(&s.Regular), Default: "false",
				Doc: "A regular file: not a directory, FIFO, socket or device."},
			{Key: "max-age", Value: config.Duration(&s.MaxAge), Default: "0s",
				Doc: "How long ago the file may have been modified at most, for a file that a live process rewrites; 0: any age."},
			{Key: "content", Value: config.String(&s.Content),
				Doc: "A regular expression that the first 64 KiB of the file must match."},
		}
	},
	build: func(_ string, s probe.FileSpec, _ Env) (health.Checker, error) { return probe.File(s) },
})

var fileCLI = takes(CLI{
	Schemes: []string{"file"}, Target: "file:///PATH",
	Help: "a file that exists (--non-empty, --regular, --max-age, --content)", Example: "file:///etc/hostname",
}, targets[probe.FileSpec]{
	flags: func(s *probe.FileSpec) []Flag {
		return []Flag{
			{Name: "non-empty", Value: boolFlag(&s.NonEmpty), Usage: "the file must not be empty (a directory: must have an entry)"},
			{Name: "regular", Value: boolFlag(&s.Regular), Usage: "the file must be a regular file"},
			{Name: "max-age", Value: durationFlag(&s.MaxAge), Usage: "the file must have been modified within this long"},
			{Name: "content", Value: stringFlag(&s.Content), Usage: "a regular expression the content must match (first 64 KiB)"},
		}
	},
	url: func(target string, s probe.FileSpec) (*probe.Prober, error) {
		u, err := parseTarget(target)
		switch {
		case err != nil:
			return nil, err
		case u.Host != "" && u.Host != "localhost":
			return nil, fmt.Errorf("target %q: a file URL names a local path: file:///path (three slashes)", target)
		case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(target, "?") || strings.HasSuffix(target, "#"):
			return nil, fmt.Errorf("target %q: a ? or # in a path must be written %%3F or %%23", target)
		case u.Path == "":
			return nil, fmt.Errorf("target %q has no path", target)
		}
		s.Path = u.Path
		return probe.File(s)
	},
})

package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// File is a file that must exist, and be as the block says.
var File = define(Kind{
	Name:    "file",
	Summary: "A file that exists: optionally regular, non-empty, recent, or with content matching a pattern.",
	Example: "{path: /etc/hostname}",
	CLI:     &CLI{Schemes: []string{"file"}, Target: "file:///PATH"},
}, block[probe.FileSpec]{
	fields: func(s *probe.FileSpec) []config.Field {
		return []config.Field{
			{Key: "path", Value: config.CString(&s.Path),
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

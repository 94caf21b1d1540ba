package config

import "time"

// The values of service.restart: what the agent does when the workload exits
// by itself. They are the words of the file, so that whoever reads or writes
// one (the importers) needs nothing but this package; the agent's supervisor
// spells them the same (a test pins it).
const (
	RestartNever     = "never"      // the default: vitals exits with the workload's code
	RestartOnFailure = "on-failure" // restart after a non-zero exit or a signal
	RestartAlways    = "always"     // restart after every exit
)

// BackoffResetAfter is how long the workload runs before the agent starts
// its restart backoff over from backoff.initial: a workload that ran this
// long is not crash-looping, and its next restart need not wait long. It is
// the agent's, not a setting of the file: 30s, as Pebble's default
// backoff-limit, after which Pebble starts its backoff over too. The agent's
// supervisor has the same value (a test pins it).
const BackoffResetAfter = 30 * time.Second

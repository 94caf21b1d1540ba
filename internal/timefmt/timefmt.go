// Package timefmt writes durations as vitals's outputs show them to people:
// "2s ago", "stable in 13s". Shared by the engine and the agent's parts, so
// that every output rounds alike.
package timefmt

import "time"

// Coarse is d as an output shows it: to the millisecond under a second
// ("340ms"), else to the second ("13s", "1m30s"), where more digits would
// only say how late the output was made.
func Coarse(d time.Duration) string {
	if d < time.Second && d > -time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

package target

import (
	"strings"
	"unicode/utf8"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// Help is the commands' help on targets, from the table: a line for each
// kind this build runs (its CLI's Target and Help), one for the kinds only
// the full build runs, k8s://, and the command line last, as it comes after
// the URLs on a command line.
var Help = func() string {
	var b strings.Builder
	b.WriteString("Targets name their kind by scheme:")
	var elsewhere, commands []string
	for _, k := range kinds.All {
		c := k.CLI
		switch {
		case c.Why != "":
		case !c.Builds():
			elsewhere = append(elsewhere, c.Schemes[0]+"://")
		case len(c.Schemes) == 0:
			commands = append(commands, helpLine(c.Target, c.Help))
		default:
			b.WriteString(helpLine(c.Target, c.Help))
		}
	}
	if elsewhere != nil {
		b.WriteString(helpLine(strings.Join(elsewhere, ", "), "in the full build of vitals only"))
	}
	b.WriteString(KubeHelp)
	b.WriteString(strings.Join(commands, ""))
	return b.String()
}()

// helpColumn is where a help line's text starts, after its target: wide
// enough for most targets, which stay on one line with their text.
const helpColumn = 41

// helpLine is a line of Help: a target, and what it checks from
// helpColumn on; below it, at helpColumn, after a target too long to leave
// two spaces before it.
func helpLine(target, text string) string {
	pad := helpColumn - 2 - utf8.RuneCountInString(target)
	if pad < 2 {
		return "\n  " + target + "\n" + strings.Repeat(" ", helpColumn) + text
	}
	return "\n  " + target + strings.Repeat(" ", pad) + text
}

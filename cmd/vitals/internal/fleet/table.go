package fleet

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/vitals-dev/vitals/internal/escape"
)

// maxEventText is how much of the newest Event a table's line shows.
const maxEventText = 80

// WriteTable writes v as vitals fleet --once prints it for people: the
// summary, then a line per pod in kubectl's columns, ages as kubectl gives
// them, and the pod's newest Event.
func WriteTable(w io.Writer, v View, now time.Time) error {
	if _, err := fmt.Fprintln(w, v.Summary.Text); err != nil {
		return err
	}
	if len(v.Rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tNODE\tVITALS\tSINCE\tREADY\tRESTARTS\tAGE\tLAST EVENT")
	for _, r := range v.Rows {
		since, ready, node := "-", "no", r.Node
		if r.Condition != nil {
			since = age(now.Sub(r.Condition.Since))
		}
		if r.Ready {
			ready = "yes"
		}
		if node == "" {
			node = "-"
		}
		last := "-"
		if len(r.Events) > 0 {
			e := r.Events[0]
			last = e.Reason
			if e.Message != "" {
				last += ": " + e.Message
			}
			// One line of the table: an output's line breaks and tabs
			// escaped, as the agent's commands show outputs on one line.
			last = escape.Line(last)
			if runes := []rune(last); len(runes) > maxEventText {
				last = string(runes[:maxEventText-1]) + "…"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Namespace, r.Name, node, r.Status, since, ready, r.Restarts,
			age(now.Sub(r.Created)), last)
	}
	return tw.Flush()
}

// age is a duration as kubectl's AGE column gives it: 45s, 3m12s, 5h, 2d3h.
func age(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 10*time.Minute:
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 3*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

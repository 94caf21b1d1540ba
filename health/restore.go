package health

import "fmt"

// Restore puts results, oldest first, in the kept history of the check
// named name, as if it had recorded them: for a program that keeps its
// checks' histories across its restarts (vitals's history: file), so that
// what it shows of a check goes back further than its own start. Only the
// last WithHistory of them are kept. Their outputs are kept as the
// Monitor keeps any (redacted, escaped, capped).
//
// The results are to look at, not to decide on: the check's status,
// counters, Runs and schedule stay as they are (a check restored starts
// pending, and its first run of this process decides), and no event says
// anything. Restore fails, changing nothing, on a name no check has and on
// a check that has a result of its own already: restored results come
// before the check's first.
func (m *Monitor) Restore(name string, results []Result) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byName[name]
	switch {
	case !ok:
		return fmt.Errorf("restore the history of check %q: %w", name, ErrNoSuchCheck)
	case e.state.runs > 0 || len(e.history.slots) > 0:
		return fmt.Errorf("restore the history of check %q: it has results of its own already, which restored ones would come after", name)
	}
	for _, r := range results[max(len(results)-int(e.history.size), 0):] {
		r.Output = m.output(r.Output)
		e.history.add(r)
	}
	return nil
}

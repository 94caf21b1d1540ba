// Package health is the engine of vitals: a Monitor runs checks in the
// background and serves /livez, /readyz and /startupz from their state, so
// that a probe answers what the checks found, at once, without running
// anything.
//
// A check has a name, a level and a Checker. The level says which endpoint it
// answers to, with the kubelet's meaning:
//
//   - Startup checks gate the rest. Live and ready checks do not run until
//     every startup check has passed; startup checks stop once passed, and the
//     level stays passed (it latches).
//   - Live checks fail /livez when the process is wedged and must be
//     restarted. A pending live check does not fail liveness.
//   - Ready checks fail /readyz when the process cannot serve now. A pending
//     ready check fails readiness, and so do a failed live check, a startup
//     level that has not passed, and Drain.
//
// Each check runs right after its initial delay, then every period at a
// phase drawn once (the jitter), each run under a timeout. A check passes after
// SuccessThreshold passing runs in a row and fails after FailureThreshold
// failing ones; in between, a passing check whose latest runs failed reports
// warn. With a StableFor, a check counts as passing only once it has passed
// that long with no failed run (minReadySeconds for one check), and passes at
// that moment. A checker that ignores its context is recorded as failed at
// the timeout and is never run twice at once; a checker that panics is a
// failed run with the panic's message.
//
// Two kinds of check are fed by the program rather than run: a Heartbeat,
// which fails once its ttl passes without a Beat (a loop that stopped), and
// which a beat may also tell how the program is (Report: pass, warn or fail,
// with an output); and a Watchdog, which fails while a unit of work begun
// with Begin (or BeginID) has run longer than its limit (a reconciler that
// hangs). Both answer at the exact moment a deadline passes.
//
// When the program the checks judge restarts, Reset starts every check over,
// and Pause holds them all while it is down; for one service among several,
// ResetChecks and PauseChecks do the same to its checks alone, on behalf of
// an owner. Readiness fails while any pause stands. A check stopped with
// StopCheck, or added Disabled, neither runs nor counts until StartCheck.
//
// Every change of status is an Event in a bounded log, read by cursor with
// Events, or followed with a Follower (Follow), which waits for the next
// events, counts those a slow reader missed, and ends after the events
// emitted before its Close; a slow reader never holds up a check.
//
// The probe endpoints speak the kube-apiserver's text format (?verbose,
// ?exclude=) and the IETF application/health+json format, and Checker gives
// controller-runtime's healthz.Checker for operators. Package health uses the
// standard library only, so importing it forces no dependency version on a
// service.
package health

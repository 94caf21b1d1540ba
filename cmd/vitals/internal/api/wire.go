package api

import (
	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// This file turns the Monitor's state into the API's JSON, the wire types of
// package client, which the server writes and the client reads. Keys are
// camelCase as in the events and the IETF health format; durations are Go's
// strings ("10s", "1.5ms"); times are RFC 3339.

func checkOf(st health.CheckState, withHistory bool) client.Check {
	c := client.Check{
		Name: st.Name, Level: st.Level, Kind: st.Kind, Status: st.Status, Stopped: st.Stopped, Since: st.Since,
		Successes: st.ConsecutiveSuccesses, Failures: st.ConsecutiveFailures,
		SuccessThreshold: st.SuccessThreshold, FailureThreshold: st.FailureThreshold, Runs: st.Runs,
		StableFor: client.Duration(st.StableFor), StableAt: st.StableAt,
		Period: client.Duration(st.Period), Timeout: client.Duration(st.Timeout), InitialDelay: client.Duration(st.InitialDelay),
	}
	if last, ok := st.Last(); ok {
		r := resultOf(last)
		c.Last = &r
	}
	if withHistory {
		c.History = make([]client.Result, len(st.History))
		for i, r := range st.History {
			c.History[i] = resultOf(r)
		}
	}
	return c
}

func resultOf(r health.Result) client.Result {
	return client.Result{Time: r.Time, Duration: client.Duration(r.Duration), OK: r.OK, Warn: r.Warn, Output: r.Output,
		ObservedValue: r.ObservedValue, ObservedUnit: r.ObservedUnit}
}

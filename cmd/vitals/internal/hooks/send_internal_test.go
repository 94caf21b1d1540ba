package hooks

import (
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

func TestBackoffDoublesUpToItsMaxGiveOrTakeTenPercent(t *testing.T) {
	r := config.HookRetry{BackoffInitial: 500 * time.Millisecond, BackoffMax: 10 * time.Second}
	for _, tc := range []struct {
		attempt int
		after   time.Duration // Retry-After
		want    time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{2, 0, time.Second},
		{3, 0, 2 * time.Second},
		{5, 0, 8 * time.Second},
		{6, 0, 10 * time.Second},
		{60, 0, 10 * time.Second},
		{1, 3 * time.Second, 3 * time.Second},        // the receiver asked for longer
		{1, time.Hour, 10 * time.Second},             // but no longer than the max
		{3, 100 * time.Millisecond, 2 * time.Second}, // nor shorter than the backoff
	} {
		for range 50 {
			got := backoff(r, tc.attempt, tc.after)
			if lo, hi := tc.want*9/10, tc.want*11/10; got < lo || got > hi || tc.after > 0 && got < min(tc.after, 10*time.Second) {
				t.Fatalf("backoff after attempt %d, Retry-After %v: %v, want %v ±10%%", tc.attempt, tc.after, got, tc.want)
			}
		}
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"-3":                            0,
		"99999999999999999":             24 * time.Hour,
		"soon":                          0,
		"Sun, 01 Mar 2026 12:00:30 GMT": 30 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

func TestEnvNamesAreUpperSnakeCase(t *testing.T) {
	for key, want := range map[string]string{
		"exitCode": "VITALS_EVENT_EXIT_CODE", "check": "VITALS_EVENT_CHECK", "pid": "VITALS_EVENT_PID",
	} {
		if got := envName(key); got != want {
			t.Errorf("envName(%q) = %q, want %q", key, got, want)
		}
	}
}

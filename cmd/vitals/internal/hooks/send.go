package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
)

// maxErrorBody caps how much of a failed answer's reason its error quotes:
// the receiver's reason, in one log line.
const maxErrorBody = 256

// maxReasonBody bounds how much of a failed answer is read for its reason:
// enough for a JSON error whose message is near maxErrorBody (Pebble's).
const maxReasonBody = 4 << 10

// maxDrainedBody bounds how much of an answer is read, and thrown away, so
// that its connection serves the next request: more is not worth reading.
const maxDrainedBody = 64 << 10

// sender is the request a hook sends for each event, and how: a webhook's
// to its URL, a Pebble notice's to Pebble's API.
type sender struct {
	retry       config.HookRetry
	method, url string
	// what names the request in errors, without its secrets: "POST
	// http://operator/hook", "POST /v1/notices on /run/pebble.socket".
	what   string
	client *http.Client
	header http.Header
	// reason says why an answer that is not a 2xx failed, from its body;
	// nil: the body is the reason.
	reason func(body []byte) string
	// delivered says whether a 2xx answer's body is the receiver's own
	// (Pebble's, not whatever else listens on its socket): a false one is
	// a failed attempt. nil: any 2xx delivers.
	delivered func(body []byte) bool
	// receiver names whose answer delivered wants, in errors: "Pebble's
	// answer with the notice's id".
	receiver string
}

// sending delivers an event with s's request, its body the event's JSON, or
// what body makes of the event when body is not nil; a failure worth
// retrying is tried again, up to s's Attempts.
func (r *Runner) sending(h *hook, s *sender, body func(ev health.Event, event []byte) ([]byte, error)) func(ctx context.Context, ev health.Event, event []byte) (int, error) {
	return func(ctx context.Context, ev health.Event, event []byte) (int, error) {
		req := event
		if body != nil {
			var err error
			if req, err = body(ev, event); err != nil {
				return 0, err
			}
		}
		for attempt := 1; ; attempt++ {
			retry, after, err := s.attempt(ctx, req)
			if err == nil {
				return attempt, nil
			}
			if !retry || attempt >= s.retry.Attempts {
				return attempt, err
			}
			r.failedAttempt(h, ev, attempt, err)
			wait := time.NewTimer(backoff(s.retry, attempt, after))
			select {
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
				return attempt, fmt.Errorf("%w; vitals stopped before the next attempt", err)
			}
		}
	}
}

// attempt sends body once. It says whether a failure is worth another
// attempt, and how long the receiver asked to wait first (Retry-After), if
// it did.
func (s *sender) attempt(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	reqCtx, cancel := context.WithTimeout(ctx, s.retry.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, s.method, s.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header = s.header.Clone()
	resp, err := s.client.Do(req)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, 0, fmt.Errorf("%s: cancelled: vitals stopped", s.what)
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		return true, 0, fmt.Errorf("%s: no answer within %v", s.what, s.retry.Timeout)
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the whole URL, path and query with their secrets
		}
		return true, 0, fmt.Errorf("%s: %w", s.what, err)
	}
	defer resp.Body.Close()
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, maxReasonBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainedBody))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// An answer cut short (the attempt's timeout in its body) came
		// from a receiver that took the event: sending it again would
		// record it twice.
		if s.delivered == nil || readErr != nil || s.delivered(answer) {
			return false, 0, nil
		}
		// Something else answers where the receiver should: it may be
		// gone for a while (a Pebble restarting), as when nothing answers.
		return true, 0, fmt.Errorf("%s answered %s, not %s: %s", s.what, resp.Status, s.receiver, escape.Line(brief(string(answer))))
	}
	err = fmt.Errorf("%s answered %s", s.what, resp.Status)
	reason := string(answer)
	if s.reason != nil {
		reason = s.reason(answer)
	}
	if text := brief(reason); text != "" {
		err = fmt.Errorf("%w: %s", err, text)
	}
	retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
	return retry, retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
}

// brief is what an error quotes of an answer's text: its first
// maxErrorBody bytes, trimmed.
func brief(text string) string {
	if len(text) > maxErrorBody {
		text = text[:maxErrorBody]
	}
	return strings.TrimSpace(strings.ToValidUTF8(text, "?"))
}

// backoff is how long r waits after the attempt-th attempt failed:
// BackoffInitial doubled for each attempt before, up to BackoffMax, give or
// take 10%; or what the receiver asked for (after), when longer, up to
// BackoffMax.
func backoff(r config.HookRetry, attempt int, after time.Duration) time.Duration {
	d := r.BackoffInitial
	for i := 1; i < attempt && d < r.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, r.BackoffMax)
	d = time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
	return max(d, min(after, r.BackoffMax))
}

// maxRetryAfter caps a Retry-After in seconds before it becomes a duration,
// which a huge number would overflow; BackoffMax caps it further anyway.
const maxRetryAfter = 24 * 60 * 60

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when
// there is none or it makes no sense.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(min(max(s, 0), maxRetryAfter)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now))
	}
	return 0
}

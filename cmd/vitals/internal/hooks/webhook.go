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

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/version"
)

// maxErrorBody caps how much of a failed answer's body its error quotes: the
// receiver's reason, in one log line.
const maxErrorBody = 256

// maxDrainedBody bounds how much of an answer is read, and thrown away, so
// that its connection serves the next request: more is not worth reading.
const maxDrainedBody = 64 << 10

// webhook is a WebhookSpec ready to send: its client and its headers.
type webhook struct {
	spec   WebhookSpec
	target string // the URL with its password hidden, for errors
	client *http.Client
	header http.Header
}

func newWebhook(s WebhookSpec) *webhook {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // see WebhookSpec: a hook is for a neighbour
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("User-Agent", "vitals/"+version.Version)
	for name, values := range s.Header {
		header.Del(name)
		for _, v := range values {
			header.Add(name, v)
		}
	}
	return &webhook{
		spec:   s,
		target: RedactedURL(s.URL),
		client: &http.Client{
			Transport: transport,
			// A redirect is an answer: a POST that followed one would arrive
			// as a GET, without the event.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		header: header,
	}
}

// webhookDelivery sends an event to h's URL, trying again after a failure
// worth retrying, up to its Attempts.
func (r *Runner) webhookDelivery(h *hook, w *webhook) func(ctx context.Context, ev health.Event, body []byte) (int, error) {
	return func(ctx context.Context, ev health.Event, body []byte) (int, error) {
		for attempt := 1; ; attempt++ {
			retry, after, err := w.attempt(ctx, body)
			if err == nil {
				return attempt, nil
			}
			if !retry || attempt >= w.spec.Attempts {
				return attempt, err
			}
			r.failedAttempt(h, ev, attempt, err)
			wait := time.NewTimer(w.backoff(attempt, after))
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
func (w *webhook) attempt(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	reqCtx, cancel := context.WithTimeout(ctx, w.spec.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, w.spec.Method, w.spec.URL, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header = w.header.Clone()
	resp, err := w.client.Do(req)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, 0, fmt.Errorf("%s %s: cancelled: vitals stopped", w.spec.Method, w.target)
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		return true, 0, fmt.Errorf("%s %s: no answer within %v", w.spec.Method, w.target, w.spec.Timeout)
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the whole URL, path and query with their secrets
		}
		return true, 0, fmt.Errorf("%s %s: %w", w.spec.Method, w.target, err)
	}
	defer resp.Body.Close()
	quoted, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainedBody))
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return false, 0, nil
	}
	err = fmt.Errorf("%s %s answered %s", w.spec.Method, w.target, resp.Status)
	if text := strings.TrimSpace(strings.ToValidUTF8(string(quoted), "?")); text != "" {
		err = fmt.Errorf("%w: %s", err, text)
	}
	retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
	return retry, retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
}

// backoff is how long to wait after the attempt-th attempt failed:
// BackoffInitial doubled for each attempt before, up to BackoffMax, give or
// take 10%; or what the receiver asked for (after), when longer, up to
// BackoffMax.
func (w *webhook) backoff(attempt int, after time.Duration) time.Duration {
	d := w.spec.BackoffInitial
	for i := 1; i < attempt && d < w.spec.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, w.spec.BackoffMax)
	d = time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
	return max(d, min(after, w.spec.BackoffMax))
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

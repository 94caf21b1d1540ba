// Package kubefleet writes a fleet into a namespace of kubeenv's API server
// as the vitals in each pod would: thousands of pods, which no kubelet runs,
// with their Ready condition (as a kubelet writes it) and their vitals
// condition and Events (as kubereport writes them). It is what the scale
// test of vitals fleet (cmd/vitals) and its bench (bench/, P8) fill the API
// server with.
//
// It speaks the API server's REST API with the standard library alone, so
// that bench's module and cmd/vitals's share it without client-go's rate
// limiter in the way: the writes go out from many goroutines at once.
package kubefleet

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// Condition is the pod condition type the pods' vitals write: vitals
// fleet's default (--condition).
const Condition = "vitals.dev/ready"

// Workers is how many requests are in flight at once while filling: enough
// to keep the API server and etcd busy on a small machine, well below the
// API server's 200 mutating requests in flight.
const Workers = 32

// Client writes to one API server as its admin.
type Client struct {
	server, token string
	http          *http.Client
}

// New is a Client of env's API server, as the admin of env.Kubeconfig.
func New(env *kubeenv.Env) (*Client, error) {
	token, err := os.ReadFile(filepath.Join(env.Dir, "admin.token"))
	if err != nil {
		return nil, fmt.Errorf("kubefleet: the admin's token: %w", err)
	}
	return &Client{server: env.Server, token: strings.TrimSpace(string(token)), http: &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			// kubeenv's API server has a self-signed certificate, on loopback.
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			MaxIdleConnsPerHost: Workers,
		},
	}}, nil
}

// Fleet says what Fill writes.
type Fleet struct {
	Namespace string
	Pods      int // named pod-00000, pod-00001, …
	Events    int // spread evenly over the pods
	// FailingEvery makes every nth pod failing (its vitals condition False,
	// ChecksFailed, and not Ready); the others pass and are Ready. 0: none
	// fails.
	FailingEvery int
}

// Name is the name of the pod i of a Fleet.
func Name(i int) string { return fmt.Sprintf("pod-%05d", i) }

// Fill creates the namespace, then the pods, their conditions and their
// Events, Workers at a time.
func (c *Client) Fill(ctx context.Context, f Fleet) error {
	if err := c.do(ctx, http.MethodPost, "/api/v1/namespaces", "", map[string]any{
		"metadata": map[string]any{"name": f.Namespace}}, nil); err != nil {
		return err
	}
	uids := make([]string, f.Pods)
	err := c.each(ctx, f.Pods, func(i int) error {
		var created struct {
			Metadata struct{ UID string } `json:"metadata"`
		}
		if err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+f.Namespace+"/pods", "", map[string]any{
			"metadata": map[string]any{"name": Name(i), "labels": map[string]string{"app": "shop", "shard": fmt.Sprint(i % 10)}},
			"spec":     map[string]any{"nodeName": fmt.Sprintf("node-%02d", i%50), "containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1"}}},
		}, &created); err != nil {
			return err
		}
		uids[i] = created.Metadata.UID
		return c.SetCondition(ctx, f.Namespace, Name(i), f.FailingEvery <= 0 || i%f.FailingEvery != 0)
	})
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	return c.each(ctx, f.Events, func(j int) error {
		i := j % f.Pods
		reason, typ, message := "CheckPassed", "Normal", `Readiness check "db" passed`
		switch j / f.Pods % 3 {
		case 1:
			reason, typ, message = "CheckFailed", "Warning", `Readiness check "db" failed: dial tcp 10.0.0.9:5432: connect: connection refused`
		case 2:
			reason, typ, message = "Restarted", "Normal", `Started the workload "app" again (exit status 1)`
		}
		at := now.Add(-time.Duration(f.Events-j) * time.Second).Format(time.RFC3339)
		return c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+f.Namespace+"/events", "", map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("%s.%06d", Name(i), j)},
			"involvedObject": map[string]any{"kind": "Pod", "apiVersion": "v1", "namespace": f.Namespace,
				"name": Name(i), "uid": uids[i]},
			"type": typ, "reason": reason, "message": message, "count": 1,
			"firstTimestamp": at, "lastTimestamp": at,
			"source": map[string]any{"component": "vitals", "host": fmt.Sprintf("node-%02d", i%50)},
		}, nil)
	})
}

// SetCondition writes the pod's Ready condition and its vitals condition,
// passing (True, ChecksPassed) or not (False, ChecksFailed), as a strategic
// merge patch of the status: the kubelet's and kubereport's way.
func (c *Client) SetCondition(ctx context.Context, namespace, name string, passing bool) error {
	status, reason, message := "True", "ChecksPassed", "every check of the ready level passes"
	if !passing {
		status, reason, message = "False", "ChecksFailed", `db failed: dial tcp 10.0.0.9:5432: connect: connection refused`
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return c.do(ctx, http.MethodPatch, "/api/v1/namespaces/"+namespace+"/pods/"+name+"/status",
		"application/strategic-merge-patch+json", map[string]any{"status": map[string]any{
			"phase": "Running",
			"conditions": []any{
				map[string]any{"type": "Ready", "status": status, "lastTransitionTime": now},
				map[string]any{"type": Condition, "status": status, "reason": reason, "message": message, "lastTransitionTime": now},
			}}}, nil)
}

// each runs do(0) … do(n-1), Workers at a time: the first error ends it.
func (c *Client) each(ctx context.Context, n int, do func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(Workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// do sends body as JSON and decodes the answer into out, if not nil; an
// error says the request and what the API server said.
func (c *Client) do(ctx context.Context, method, path, contentType string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", cmp.Or(contentType, "application/json"))
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("kubefleet: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("kubefleet: %s %s: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("kubefleet: %s %s: %s: %s", method, path, res.Status, answer)
	}
	if out != nil {
		return json.Unmarshal(answer, out)
	}
	return nil
}

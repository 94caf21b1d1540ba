package main

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
)

// The whole-process cost of one HTTP probe: vitals against curl -fsS, each
// started fresh per iteration against the same local target, as an exec
// probe or a HEALTHCHECK starts them. Compare the two ns/op.
//
//	go test -run '^$' -bench 'Process' -count 5 ./cmd/vitals/

func benchTarget(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/healthz"
}

func benchProcess(b *testing.B, name string, args ...string) {
	for b.Loop() {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
}

func BenchmarkProcessVitalsProbe(b *testing.B) {
	benchProcess(b, vitals, "probe", benchTarget(b))
}

func BenchmarkProcessCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("no curl")
	}
	benchProcess(b, curl, "-fsS", "-o", "/dev/null", benchTarget(b))
}

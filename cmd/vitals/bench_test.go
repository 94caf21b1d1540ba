package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"

	"google.golang.org/grpc"
	grpchealthserver "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/grpchealth/grpchealthtest"
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

// BenchmarkProcessVitalsProbeBuild is the same with the probe build
// (-tags vitals_probe), which leaves the agent out.
func BenchmarkProcessVitalsProbeBuild(b *testing.B) {
	benchProcess(b, vitalsProbe, "probe", benchTarget(b))
}

func BenchmarkProcessCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("no curl")
	}
	benchProcess(b, curl, "-fsS", "-o", "/dev/null", benchTarget(b))
}

// The same for gRPC: vitals probe grpc:// against grpc-health-probe, each
// started fresh per iteration against one grpc-go health server that
// answers SERVING.
//
//	go test -run '^$' -bench 'ProcessGRPC' -count 5 ./cmd/vitals/

func grpcBenchTarget(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, grpchealthserver.NewServer()) // SERVING for ""
	go srv.Serve(ln)
	b.Cleanup(srv.Stop)
	return ln.Addr().String()
}

func BenchmarkProcessGRPCVitalsProbe(b *testing.B) {
	benchProcess(b, vitals, "probe", "grpc://"+grpcBenchTarget(b))
}

func BenchmarkProcessGRPCVitalsProbeBuild(b *testing.B) {
	benchProcess(b, vitalsProbe, "probe", "grpc://"+grpcBenchTarget(b))
}

func BenchmarkProcessGRPCHealthProbe(b *testing.B) {
	healthProbe, err := grpchealthtest.HealthProbe()
	if err != nil {
		b.Fatal(err)
	}
	benchProcess(b, healthProbe, "-addr="+grpcBenchTarget(b))
}

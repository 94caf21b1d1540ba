package servers

import (
	"fmt"
	"syscall"
)

const (
	// minReserve is the least number of descriptors kept from clients: the
	// three listeners and the one connection each holds in hand, the
	// workload's pipes and pidfd, the logs, the hooks' and the Kubernetes
	// reporter's connections, the runtime's epoll and pipes.
	minReserve = 64
	// perCheck is what one check may hold at once beyond that: an exec
	// check's three pipes (both ends while it starts) and its pidfd, or a
	// dependency check's pooled connections.
	perCheck = 8
	// minCap is the least cap of a listener, whatever the limit: below about
	// 128 descriptors the reserve cannot be kept, and vitals is not meant to
	// run there.
	minCap = 8
	// Each listener's cap is at most its ceiling, whatever the limit: with
	// the limits containers get (a hard limit of 524,288 or 1,048,576, which
	// Go raises the soft one to), a cap from descriptors alone would be
	// hundreds of thousands of connections, and memory (some 20 KB each,
	// idle) would run out long before descriptors. 1,024 is far more than
	// the kubelet, a scraper and a few load balancers hold; the API and gRPC
	// serve a handful of readers.
	probeCeiling = 1024
	apiCeiling   = 256
	grpcCeiling  = 256
	// maxLimit bounds the limit the caps are sized from: Linux allows at
	// most 2^30 (fs.nr_open), and the sizes stay ints.
	maxLimit = 1 << 30
)

// Caps are the connection caps of the agent's listeners, sized from the
// descriptors the process may open.
type Caps struct {
	// Limit is RLIMIT_NOFILE in force: Go raised the soft limit to (just
	// under) the hard one at start.
	Limit int
	// Reserve is kept from clients, for the checks, the workload and vitals
	// itself: max(64 + 8 × checks, Limit/4).
	Reserve int
	// Probe, API and GRPC share what is left: the API a quarter, gRPC a
	// quarter when it is served (0 when not), the probe endpoints the rest,
	// each at most its ceiling (1,024, 256 and 256). Each listener has its
	// own so that no client of one starves another.
	Probe, API, GRPC int
}

// CapsFor sizes the caps from a descriptor limit, the number of checks, and
// whether gRPC health is served.
func CapsFor(limit uint64, checks int, grpc bool) Caps {
	c := Caps{Limit: int(min(limit, maxLimit))}
	c.Reserve = max(minReserve+perCheck*checks, c.Limit/4)
	clients := max(c.Limit-c.Reserve, 0)
	c.API = max(clients/4, minCap)
	if grpc {
		c.GRPC = max(clients/4, minCap)
	}
	c.Probe = min(max(clients-c.API-c.GRPC, minCap), probeCeiling)
	c.API = min(c.API, apiCeiling)
	c.GRPC = min(c.GRPC, grpcCeiling)
	return c
}

// CapsInForce sizes the caps from the process's RLIMIT_NOFILE in force. It
// only reads the limit: vitals never sets it, so that os/exec keeps giving
// the workload and exec checks the soft limit vitals was started with
// (syscall.Setrlimit of RLIMIT_NOFILE would stop that).
func CapsInForce(checks int, grpc bool) (Caps, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return Caps{}, fmt.Errorf("read the open-file limit (RLIMIT_NOFILE): %w", err)
	}
	return CapsFor(lim.Cur, checks, grpc), nil
}

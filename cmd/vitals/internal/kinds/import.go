package kinds

import (
	"errors"

	"github.com/vitals-dev/vitals/probe"
)

// Import says which checks of other formats vitals import maps to a kind,
// and how. The importers read the other format (a manifest's probe, a
// Pebble layer's check) into a Peer, in vitals's terms, find the kind
// through Table.Kubelet or Table.Pebble, and write the block that Block
// makes of the Peer: a kind that declares an import is imported with no
// edit of the importers, and a handler no kind declares is left out.
type Import struct {
	// Kubelet is the handler of a Kubernetes probe that maps to the kind,
	// such as httpGet; "" for none.
	Kubelet string
	// Pebble is the kind of a Pebble check that maps to the kind, such as
	// http; "" for none.
	Pebble string
	// Block is the kind's block for a peer's check: the kind's own keys,
	// in the order the file writes them, each only when it says more than
	// the default. Its error says why the check is none of the kind's, such
	// as a URL that the kind's checker does not take; use Kind.FromPeer,
	// which words it as a config error.
	Block func(p Peer) ([]Pair, error)
}

// Peer is a check of another format as the importers read it, in vitals's
// terms: what the peer's format spells its own way (a kubelet's named port,
// $(VAR) in a command, Pebble's default host) is already resolved. A kind's
// Block reads the parts it has and ignores the others.
type Peer struct {
	// URL is what an HTTP check asks: http:// or https://.
	URL string
	// Status is the statuses that pass, as the http kind writes them, when
	// the peer's are not vitals's default (200-399); "" when they are.
	Status string
	// StatusNote says, beside the status, why it is not vitals's default.
	StatusNote string
	// Headers are an HTTP request's headers, in the peer's order; a name
	// given twice has two values.
	Headers []Named
	// Insecure says the peer accepts any certificate of an HTTPS server.
	Insecure bool
	// InsecureNote says, beside insecure, who did not verify.
	InsecureNote string

	// Address is HOST:PORT of a TCP server or of a gRPC server.
	Address string
	// Service is the grpc.health.v1 service asked about; "" for the server
	// as a whole.
	Service string

	// Command is the words of a command run with no shell: the program,
	// then its arguments.
	Command []string
	// Env are the variables added to the command's environment, in the
	// peer's order, one value each.
	Env []Named
	// Dir is the command's working directory; "" for vitals's.
	Dir string
}

// Named is a name with its values, in the peer's order: a header, which
// may be given twice, or a variable, which has one value.
type Named struct {
	Name   string
	Values []string
}

// Pair is one key of a kind's block, as an import writes it.
type Pair struct {
	// Key is one of the kind's fields.
	Key string
	// Value is a string, a bool, a []string (a list of words) or a []Named
	// (a mapping, in order).
	Value any
	// Note is a comment for the file beside the key; "" for none.
	Note string
}

// FromPeer is the kind's block for a peer's check (Import.Block), with an
// error worded as the file's are, without the checker's "KIND probe: ".
// The kind must have an Import.
func (k *Kind) FromPeer(p Peer) ([]Pair, error) {
	block, err := k.Import.Block(p)
	if err != nil {
		return nil, errors.New(probe.WithoutKind(err))
	}
	return block, nil
}

// Kubelet returns the kind that a Kubernetes probe with the handler maps
// to, nil if none does.
func (t Table) Kubelet(handler string) *Kind {
	return t.importing(func(i *Import) string { return i.Kubelet }, handler)
}

// Pebble returns the kind that a Pebble check of the kind named kind maps
// to, nil if none does.
func (t Table) Pebble(kind string) *Kind {
	return t.importing(func(i *Import) string { return i.Pebble }, kind)
}

func (t Table) importing(from func(*Import) string, name string) *Kind {
	for _, k := range t {
		if k.Import != nil && from(k.Import) == name {
			return k
		}
	}
	return nil
}

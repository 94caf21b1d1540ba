package kinds_test

import (
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// A kind that imports says from what and how, and no two kinds import the
// same check of a peer: the table finds the one that does.
func TestAKindThatImportsIsTheOneTheTableFindsForItsPeersCheck(t *testing.T) {
	kubelet, pebble := map[string]string{}, map[string]string{}
	for _, k := range kinds.All {
		i := k.Import
		if i == nil {
			continue
		}
		if i.Block == nil || i.Kubelet == "" && i.Pebble == "" {
			t.Errorf("kind %s: an Import names a handler or a Pebble kind, and has a Block", k.Name)
		}
		if i.Kubelet != "" {
			if other, ok := kubelet[i.Kubelet]; ok {
				t.Errorf("kinds %s and %s both import the kubelet's %s", other, k.Name, i.Kubelet)
			}
			kubelet[i.Kubelet] = k.Name
			if got := kinds.All.Kubelet(i.Kubelet); got != k {
				t.Errorf("the table finds %v for the kubelet's %s, want %s", got, i.Kubelet, k.Name)
			}
		}
		if i.Pebble != "" {
			if other, ok := pebble[i.Pebble]; ok {
				t.Errorf("kinds %s and %s both import Pebble's %s", other, k.Name, i.Pebble)
			}
			pebble[i.Pebble] = k.Name
			if got := kinds.All.Pebble(i.Pebble); got != k {
				t.Errorf("the table finds %v for Pebble's %s, want %s", got, i.Pebble, k.Name)
			}
		}
	}
	if k := kinds.All.Kubelet("sleep"); k != nil {
		t.Errorf("the kubelet's sleep (a lifecycle handler, no probe) is imported as %s", k.Name)
	}
}

// A peer's check that the kind's checker would not take fails the import,
// said as the file's errors are, without the checker's prefix.
func TestAPeersCheckTheKindDoesNotTakeFailsItsImport(t *testing.T) {
	for _, tt := range []struct {
		kind *kinds.Kind
		peer kinds.Peer
		want string
	}{
		{&kinds.HTTP, kinds.Peer{URL: "localhost:8080/health"}, `URL "localhost:8080/health": scheme must be http or https`},
		{&kinds.TCP, kinds.Peer{Address: "localhost"}, `address "localhost": missing port in address`},
		{&kinds.GRPC, kinds.Peer{Address: "localhost:0"}, `URL "grpc://localhost:0": port "0" is not a number from 1 to 65535`},
	} {
		if block, err := tt.kind.FromPeer(tt.peer); err == nil || err.Error() != tt.want {
			t.Errorf("%s from %+v: %v, %v; want %s", tt.kind.Name, tt.peer, block, err, tt.want)
		}
	}
}

package config_test

import (
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
)

// The file's words for restart and the agent's backoff reset are what the
// supervisor does: the importers write the one, the agent runs the other.
func TestTheServiceValuesAreTheSupervisorsOwn(t *testing.T) {
	for _, tt := range []struct{ config, supervise string }{
		{config.RestartNever, supervise.Never},
		{config.RestartOnFailure, supervise.OnFailure},
		{config.RestartAlways, supervise.Always},
	} {
		if tt.config != tt.supervise {
			t.Errorf("config says restart: %q where the supervisor says %q", tt.config, tt.supervise)
		}
	}
	if config.BackoffResetAfter != supervise.ResetAfter {
		t.Errorf("config.BackoffResetAfter is %v, the supervisor starts its backoff over after %v", config.BackoffResetAfter, supervise.ResetAfter)
	}
}

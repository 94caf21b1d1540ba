//go:build !vitals_probe

package cli

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/vitals-dev/vitals/client"
)

// check exits by the check's status; --run runs it and exits by the run;
// a check that is not there is bad usage.
func TestCheckShowsACheckAndRunsIt(t *testing.T) {
	a := startAPIAgent(t)
	o := vitals("check", "peer-config")
	o.expect(t, 1, "name:          peer-config\nlevel:         ready\nkind:          file\nstatus:        fail for ", "peer-config: fail: "+a.missing+"\n")
	o.expect(t, 1, "history, oldest first:\n  ", "")
	vitals("check", "nope").expect(t, 2, "", "vitals: no such check \"nope\"\n")
	vitals("check", "a", "b").expect(t, 2, "", "accepts 1 arg(s), received 2")

	a.writeConf(t)
	o = vitals("check", "peer-config", "--run")
	o.expect(t, 0, "run:           ok in ", "")
	o.expect(t, 0, "status:        pass for ", "")
	var ran struct {
		Result client.Result `json:"result"`
		Check  client.Check  `json:"check"`
	}
	o = vitals("check", "peer-config", "--run", "-o", "json")
	if err := json.Unmarshal([]byte(o.stdout), &ran); err != nil || o.code != 0 || !ran.Result.OK || ran.Check.Name != "peer-config" || len(ran.Check.History) == 0 {
		t.Fatalf("--run -o json: %v %+v", err, o)
	}

	// A failing run exits 1 and says why.
	os.Remove(a.conf)
	vitals("check", "peer-config", "--run").expect(t, 1, "run:           failed in ", "peer-config: "+a.missing+"\n")
}

package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/signals"
	"github.com/vitals-dev/vitals/health"
)

// maxExecOutput caps what is kept of a hook command's output, for the log
// line of its failure: room for an error message and a few lines around it,
// in one log line.
const maxExecOutput = 4 << 10

// execWaitDelay bounds how long a command's output is read after it exited
// (or was killed): a process it started that left its group may hold the
// pipe open for good, and must not hold up the next event.
const execWaitDelay = time.Second

// runCommand runs an exec hook's command for an event: once, in a process
// group of its own, killed whole at the timeout.
func runCommand(ctx context.Context, spec config.ExecHook, ev health.Event, body []byte) error {
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return errors.New("no command")
	}
	env, err := eventEnv(ev, body)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, spec.Command[0], spec.Command[1:]...)
	cmd.Env = append(inherited(), env...)
	cmd.Stdin = bytes.NewReader(append(body, '\n'))
	out := &cappedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out // one pipe, in the order the command writes
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	killed := false // read after Wait, which waits for Cancel to return
	cmd.Cancel = func() error {
		// Before Wait reaps the leader: the group's id is still its pid.
		err := killGroup(cmd.Process.Pid)
		killed = err == nil
		return err
	}
	cmd.WaitDelay = execWaitDelay
	if err := cmd.Start(); err != nil {
		return err // Go's error names the program: "exec: \"notify\": executable file not found in $PATH"
	}
	waitErr := cmd.Wait()
	pgid := cmd.Process.Pid
	if !killed {
		// What the command left running in its group goes too: a hook runs
		// for every event, and must not leave a process behind each time.
		_ = killGroup(pgid)
	}
	reapGroup(pgid)

	output := strings.TrimSpace(out.String())
	with := func(msg string) error {
		if output != "" {
			msg += ": " + output
		}
		return errors.New(msg)
	}
	state := cmd.ProcessState
	switch {
	case state == nil:
		return waitErr
	case killed && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return with(fmt.Sprintf("%s timed out after %v: its process group was killed", spec.Command[0], spec.Timeout))
	case killed:
		return with(fmt.Sprintf("%s cancelled: vitals stopped", spec.Command[0]))
	}
	status, _ := state.Sys().(syscall.WaitStatus)
	switch {
	case status.Signaled():
		return with(fmt.Sprintf("%s killed by signal %s", spec.Command[0], signals.SignalName(status.Signal())))
	case state.ExitCode() != 0:
		return with(fmt.Sprintf("%s exited with status %d", spec.Command[0], state.ExitCode()))
	}
	// Exit 0 delivers, even when the output was cut short after
	// execWaitDelay (exec.ErrWaitDelay).
	return nil
}

// eventEnv is the variables that carry the event to an exec hook: one per
// field of its JSON (eventStrings), VITALS_EVENT_ plus the field's name in
// upper snake case.
func eventEnv(ev health.Event, body []byte) ([]string, error) {
	fields, err := eventStrings(ev, body)
	if err != nil {
		return nil, err
	}
	env := []string{
		"VITALS_EVENT_ID=" + strconv.FormatUint(ev.ID, 10),
		"VITALS_EVENT_TYPE=" + string(ev.Type),
		"VITALS_EVENT_TIME=" + ev.Time.Format(time.RFC3339Nano),
	}
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		if key == "id" || key == "type" || key == "time" {
			continue
		}
		env = append(env, envName(key)+"="+fields[key])
	}
	return env, nil
}

// eventStrings is the fields of ev's JSON, body, as strings: a string as it
// is, another value as its JSON (exitCode 1 is "1"), empty ones and nulls
// left out. An exec hook gets them as variables, a Pebble notice as data.
func eventStrings(ev health.Event, body []byte) (map[string]string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("event %d's fields: %w", ev.ID, err)
	}
	out := make(map[string]string, len(fields))
	for key, raw := range fields {
		v := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil { // a string, or null
			v = s
		}
		if v != "" {
			out[key] = v
		}
	}
	return out, nil
}

// inherited is vitals's environment without VITALS_EVENT_* variables, so
// that a field an event does not have is unset, not another event's.
func inherited() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "VITALS_EVENT_")
	})
}

// killGroup sends SIGKILL to every process of the group that pid leads, and
// says os.ErrProcessDone, as exec.Cmd.Cancel expects, when none is left.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// reapGroup reaps the killed processes of the group pgid that were handed to
// vitals as PID 1 or subreaper when their parent exited, after Wait reaped
// the leader; it returns at once when none is vitals's child.
func reapGroup(pgid int) {
	for {
		_, err := syscall.Wait4(-pgid, nil, 0, nil)
		if err != syscall.EINTR && err != nil { // ECHILD: none left
			return
		}
	}
}

// cappedBuffer keeps the first maxExecOutput bytes written to it and drops
// the rest, so that a chatty command never blocks on a full pipe.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := maxExecOutput - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

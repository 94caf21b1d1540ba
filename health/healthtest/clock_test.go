package healthtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health/healthtest"
)

func TestAdvanceFiresDueTimersInDeadlineOrderAtTheirOwnTime(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	late, early, never := clk.NewTimer(3*time.Second), clk.NewTimer(time.Second), clk.NewTimer(time.Hour)
	clk.Advance(2 * time.Second)
	select {
	case at := <-early.C():
		if !at.Equal(healthtest.Epoch.Add(time.Second)) {
			t.Fatalf("fired with %v, want its deadline", at)
		}
	default:
		t.Fatal("the 1s timer did not fire at 2s")
	}
	select {
	case <-late.C():
		t.Fatal("the 3s timer fired at 2s")
	default:
	}
	clk.Advance(time.Second)
	<-late.C()
	if !never.Stop() || never.Stop() {
		t.Fatal("Stop reports true once for a pending timer, then false")
	}
	if clk.Pending() != 0 || !clk.Now().Equal(healthtest.Epoch.Add(3*time.Second)) {
		t.Fatalf("pending %d at %v, want none at 3s", clk.Pending(), clk.Now())
	}
}

func TestATimerForNoTimeFiresAtOnce(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	select {
	case <-clk.NewTimer(0).C():
	default:
		t.Fatal("a zero timer did not fire at once")
	}
}

func TestWithTimeoutEndsAtTheFakeDeadlineWithDeadlineExceeded(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	ctx, cancel := clk.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(healthtest.Epoch.Add(time.Second)) {
		t.Fatalf("deadline %v %v, want the fake 1s", d, ok)
	}
	clk.Advance(time.Second - time.Nanosecond)
	if ctx.Err() != nil {
		t.Fatal("ended before its deadline")
	}
	clk.Advance(time.Nanosecond)
	<-ctx.Done()
	if ctx.Err() != context.DeadlineExceeded {
		t.Fatalf("err %v, want context.DeadlineExceeded", ctx.Err())
	}
}

func TestWithTimeoutEndsWithItsParentOrItsCancel(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	parent, stop := context.WithCancel(context.Background())
	ctx, cancel := clk.WithTimeout(parent, time.Hour)
	defer cancel()
	stop()
	<-ctx.Done()
	if ctx.Err() != context.Canceled {
		t.Fatalf("err %v, want context.Canceled from the parent", ctx.Err())
	}
	ctx2, cancel2 := clk.WithTimeout(context.Background(), time.Hour)
	cancel2()
	<-ctx2.Done()
	if clk.Pending() != 0 {
		t.Fatalf("%d timers left after cancel", clk.Pending())
	}
}

func TestWaitPendingReturnsOnceEnoughTimersWait(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	done := make(chan error)
	go func() { done <- clk.WaitPending(context.Background(), 2) }()
	clk.NewTimer(time.Second)
	clk.NewTimer(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := clk.WaitPending(ctx, 3); err != context.Canceled {
		t.Fatalf("WaitPending on an ended context: %v", err)
	}
}

func TestDeadlinesListsThePendingTimersSoonestFirst(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	clk.NewTimer(3 * time.Second)
	stopped := clk.NewTimer(2 * time.Second)
	clk.NewTimer(time.Second)
	stopped.Stop()
	got := clk.Deadlines()
	want := []time.Time{healthtest.Epoch.Add(time.Second), healthtest.Epoch.Add(3 * time.Second)}
	if len(got) != len(want) || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) {
		t.Fatalf("Deadlines() = %v, want %v", got, want)
	}
}

func TestNewTimerAtFiresAtItsTimeEvenAfterAJump(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	due := healthtest.Epoch.Add(2 * time.Second)
	clk.Advance(time.Second) // time jumps between reading it and setting the timer
	tm := clk.NewTimerAt(due)
	clk.Advance(time.Second)
	select {
	case at := <-tm.C():
		if !at.Equal(due) {
			t.Fatalf("fired with %v, want %v", at, due)
		}
	default:
		t.Fatal("the timer did not fire at its time")
	}
	past := clk.NewTimerAt(healthtest.Epoch)
	select {
	case <-past.C():
	default:
		t.Fatal("a timer for a time gone by did not fire at once")
	}
}

package health

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// Tick is the scheduler's granularity: a run starts at most this long after
// it is due, never before, and the runs due within the same tick start
// together, on one wake-up of the process. A wake-up costs more than the run
// of a simple check (the kernel wakes a thread for it), so that 10,000
// checks every 10s wake the process 100 times a second rather than 1,000.
// 10ms is a tenth of the jitter's spread of a 1s period, and well under
// what any probe's timing can tell apart. Timeouts are not rounded: a run's deadline
// is exact, and the sockets of its checker see it.
const Tick = 10 * time.Millisecond

// maxIdleWorkers is how many workers wait for runs between ticks: enough for
// the runs of a tick at common rates; more start when more runs are under way
// at once, and end once idle.
const maxIdleWorkers = 16

// maxKeptReady is how many runs the workers' queue keeps room for once
// it empties (300 KB): the runs of a tick at 400,000 checks a second; the
// room the runs of a start or a Reset of more checks took is let go.
const maxKeptReady = 4096

// schedule is one life of a check under the scheduler (from Start, Add,
// StartCheck or Reset until it stops) and when its next run is due.
type schedule struct {
	life    uint64        // which life of the check it is; a stopped life's schedule is dropped
	gen     uint64        // the check's generation (Reset): its results count while it is current
	startup chan struct{} // closed when startup latches
	due     time.Time     // when the next run is due
	phase   time.Duration // added once, to the due time of the life's second run; then 0 (Monitor.phase)
}

// place is an entry's place in the scheduler, guarded by its mutex.
type place struct {
	schedule             // the current life, and its next run while queued
	at       int64       // when it fires (key): the wake rounded up to the tick, or its run's deadline; come once that has
	deadline uint64      // the run under way whose deadline at is, or 0 when at is a wake
	running  *runContext // the context of its run under way; nil when none
	index    int32       // in the queue, or in the runs under way while deadline is set; -1 when in neither (an int32 keeps an entry in a smaller size class)
	parked   bool        // waiting for startup to pass
	rewake   bool        // a wait to be stable began while it was not queued: next looks again
}

// scheduler runs the checks of a Monitor (all but heartbeats and watchdogs,
// which wait on the program and keep a goroutine each): one queue of wake
// times, one goroutine that sleeps until the soonest tick and hands every run
// due by then to a pool of workers, each with one runContext, and ends the
// runs whose deadlines have come. A check's life is the kubelet worker's
// loop cut at its sleeps: step takes it from one wake to the next.
type scheduler struct {
	m     *Monitor
	mu    sync.Mutex
	q     queue
	park  []*entry // waiting for startup to pass
	life  uint64   // counts the lives started
	ended []job    // the runs whose deadlines came this tick; kept to be reused
	// The runs under way, with their deadlines: few (one per worker), and
	// most return well before their deadline, so they are looked through at
	// each wake rather than queued.
	running []*entry
	base    time.Time // when the keys count from (Start): monotonic, on the system clock
	kick    chan struct{}
	at      time.Time // when the loop wakes next; zero while awake or idle

	// The runs due are taken in turn by the workers, oldest first. One
	// worker takes a tick's runs, so that quick checks cost one thread's
	// wake-up a tick, not one each; more start when runs have waited a tick
	// (a slow checker holds its worker), one for each run waiting.
	ready   []job
	head    int // where in ready the oldest run is
	waited  int // how many of ready were there at the loop's last wake
	taken   int // how many runs the workers took since
	inStep  int // workers taking a step
	workers int // taking runs or waiting for them
	idle    int // of which waiting
	stopped bool
	more    *sync.Cond  // wakes an idle worker
	timer   *time.Timer // on the system clock, reused for every sleep

	// With a Clock that moves in jumps (a test's fake: it implements
	// TimerAt), each queued entry has a timer of its own that wakes the
	// loop, so that the clock's pending timers are the sleeping checks and
	// the runs under way, as a test counts them (healthtest's WaitPending),
	// and a timer's time is the wake's; and a run never waits for a worker,
	// since the test may move the clock only once another check has run.
	jumps  bool
	timers map[*entry]func() // stops an entry's timer
}

type job struct {
	e        *entry
	s        schedule
	rc       *runContext // the context of the run whose deadline has come
	deadline uint64      // that run, or 0 for a wake
}

func newScheduler(m *Monitor) *scheduler {
	_, system := m.clock.(systemClock)
	_, jumps := m.clock.(TimerAt)
	s := &scheduler{m: m, kick: make(chan struct{}, 1), jumps: jumps && !system, timers: map[*entry]func(){}}
	s.more = sync.NewCond(&s.mu)
	return s
}

// start begins a new life of e, its first run due at due, with a phase
// drawn for it.
func (s *scheduler) start(e *entry, gen uint64, startup chan struct{}, due time.Time) {
	s.startPhased(e, gen, startup, due, s.m.phase(e.check.Period))
}

// startPhased is start with the phase given: that of the life of a check
// that an Update keeps the place of (placeOf), or 0 once it had taken it.
func (s *scheduler) startPhased(e *entry, gen uint64, startup chan struct{}, due time.Time, phase time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.life++
	s.stopLocked(e)
	e.place.schedule = schedule{life: s.life, gen: gen, startup: startup, due: due, phase: phase}
	s.queueLocked(e, due)
}

// placeOf is where e's life is in its period: when its next run is due
// (or the run under way was), with the phase when its second run has not
// taken it yet (0 after); ok is false when e has no life.
func (s *scheduler) placeOf(e *entry) (due time.Time, phase time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.place.due, e.place.phase, e.place.life != 0
}

// stop ends e's life: it is no longer queued, and a run under way is ended
// (context.Canceled) and not recorded.
func (s *scheduler) stop(e *entry) {
	s.mu.Lock()
	// The run of its own under way: its context may be another check's run
	// by now (its worker moved on after the run was given up), which the
	// id tells apart.
	rc, id := e.place.running, e.place.deadline
	s.stopLocked(e)
	s.mu.Unlock()
	if id != 0 && rc.end(id, context.Canceled) {
		s.m.graceThenAbandon(e, rc, id)
	}
}

func (s *scheduler) stopLocked(e *entry) {
	s.removeLocked(e)
	if e.place.parked {
		if i := slices.Index(s.park, e); i >= 0 {
			s.park = slices.Delete(s.park, i, i+1)
		}
	}
	e.place.life, e.place.parked, e.place.rewake = 0, false, false
}

// current reports whether life is e's life, which has not stopped.
func (s *scheduler) current(e *entry, life uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.place.life == life
}

// next queues life sc of e to wake at its due time, or earlier to settle a
// wait to be stable; a life that has stopped meanwhile is dropped.
func (s *scheduler) next(e *entry, sc schedule) {
	for {
		wake := sc.due
		if at, waiting := s.m.stableAt(e); waiting && at.Before(wake) {
			wake = at
		}
		s.mu.Lock()
		if e.place.rewake && e.place.life == sc.life {
			e.place.rewake = false
			s.mu.Unlock()
			continue // a wait began since stableAt looked
		}
		if e.place.life == sc.life {
			e.place.schedule = sc
			s.queueLocked(e, wake)
		}
		s.mu.Unlock()
		return
	}
}

// wakeBy wakes e by at, to settle a wait to be stable that a result recorded
// outside its loop (RunNow) started.
func (s *scheduler) wakeBy(e *entry, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.place.life == 0 {
		return
	}
	if e.place.index >= 0 && e.place.deadline == 0 {
		if tick := roundUp(at); s.key(tick) < e.place.at {
			s.queueLocked(e, at)
		}
		return
	}
	e.place.rewake = true
}

// parkUntilStartup keeps life sc of e until startup passes; then its run
// is due at once.
func (s *scheduler) parkUntilStartup(e *entry, sc schedule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.place.life != sc.life {
		return
	}
	e.place.schedule = sc
	if fired(sc.startup) { // it passed after the worker looked
		e.place.due = s.m.clock.Now()
		s.queueLocked(e, e.place.due)
		return
	}
	if !e.place.parked {
		e.place.parked = true
		s.park = append(s.park, e)
	}
}

// startupPassed makes the parked runs due now.
func (s *scheduler) startupPassed(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.park {
		if e.place.parked {
			e.place.parked, e.place.due = false, now
			s.queueLocked(e, now)
		}
	}
	clear(s.park)
	s.park = s.park[:0]
}

// watch keeps run id of e's life, under way in rc, to be ended at its
// deadline; false when that life has stopped already.
func (s *scheduler) watch(e *entry, life uint64, rc *runContext, id uint64, deadline time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.place.life != life {
		return false
	}
	s.removeLocked(e)
	e.place.running, e.place.at, e.place.deadline = rc, s.key(deadline), id
	e.place.index = int32(len(s.running))
	s.running = append(s.running, e)
	if s.jumps {
		s.timerLocked(e, deadline)
	}
	s.kickLocked(deadline)
	return true
}

// unwatch forgets the deadline of e's run id, which has returned or been
// given up.
func (s *scheduler) unwatch(e *entry, id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.place.deadline == id {
		s.removeLocked(e)
		e.place.running = nil
	}
}

// removeLocked takes e out of the queue or the runs under way, if it is in
// either.
func (s *scheduler) removeLocked(e *entry) {
	switch i := int(e.place.index); {
	case i < 0:
	case e.place.deadline != 0:
		last := len(s.running) - 1
		s.running[i] = s.running[last]
		s.running[i].place.index = int32(i)
		s.running[last] = nil
		s.running = s.running[:last]
		e.place.index, e.place.deadline = -1, 0
	default:
		s.q.remove(i)
	}
	if stop, ok := s.timers[e]; ok {
		stop()
		delete(s.timers, e)
	}
}

// queueLocked queues e to wake at at, rounded up to the tick unless it is
// due already.
func (s *scheduler) queueLocked(e *entry, at time.Time) {
	if at.After(s.m.clock.Now()) {
		at = roundUp(at)
	}
	if e.place.deadline != 0 {
		s.removeLocked(e) // from the runs under way
	}
	key := s.key(at)
	e.place.at = key
	if i := int(e.place.index); i >= 0 {
		s.q[i].key = key
		s.q.fix(i)
	} else {
		s.q.push(waking{key, e})
	}
	if s.jumps {
		s.timerLocked(e, at)
	}
	if s.q[0].e == e {
		s.kickLocked(at)
	}
}

// kickLocked wakes the loop if it sleeps past at, or does not know of it.
func (s *scheduler) kickLocked(at time.Time) {
	if s.at.IsZero() || at.Before(s.at) {
		notify(s.kick)
	}
}

// timerLocked gives e a timer of the Clock at at, in place of the one it
// had, that wakes the loop.
func (s *scheduler) timerLocked(e *entry, at time.Time) {
	if stop, ok := s.timers[e]; ok {
		stop()
	}
	t := s.m.clock.(TimerAt).NewTimerAt(at)
	stopped := make(chan struct{})
	go func() {
		select {
		case <-t.C():
			notify(s.kick)
		case <-stopped:
		}
	}()
	s.timers[e] = func() { t.Stop(); close(stopped) }
}

// come marks a place whose run's deadline has come (place.at).
const come = math.MinInt64

// key is t as the queue keys it: nanoseconds since base. A place keeps its
// time so (8 bytes where a time.Time takes 24, in every check's entry).
func (s *scheduler) key(t time.Time) int64 { return int64(t.Sub(s.base)) }

// time is the time of key k.
func (s *scheduler) time(k int64) time.Time { return s.base.Add(time.Duration(k)) }

// roundUp is t rounded up to the tick. It keeps t's monotonic clock
// reading (Truncate drops it), so that a step of the wall clock moves no
// wake.
func roundUp(t time.Time) time.Time {
	if r := t.Truncate(Tick); r.Before(t) {
		return t.Add(r.Add(Tick).Sub(t))
	}
	return t
}

// loop is the scheduler's goroutine: until ctx ends, sleep until the soonest
// tick, then hand every run due by then to the workers and end every run
// whose deadline has come.
func (s *scheduler) loop(ctx context.Context) {
	defer s.m.workers.Done()
	defer func() {
		s.mu.Lock()
		s.stopped = true
		// The runs not taken yet are of lives that end with the Monitor:
		// none runs, though every worker may be held by a slow checker.
		for i := s.head; i < len(s.ready); i++ {
			s.ready[i] = job{}
			s.m.workers.Done()
		}
		s.ready, s.head, s.waited = s.ready[:0], 0, 0
		s.more.Broadcast() // the idle workers end
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		now := s.m.clock.Now()
		nowKey := s.key(now)
		ended := s.ended[:0]
		for len(s.q) > 0 && s.q[0].key <= nowKey {
			e := s.q[0].e
			s.removeLocked(e)
			s.m.workers.Add(1) // done when its step is
			s.ready = append(s.ready, job{e: e, s: e.place.schedule})
		}
		s.staffLocked()
		next := time.Time{}
		if len(s.q) > 0 {
			next = s.time(s.q[0].key)
		}
		for _, e := range s.running {
			switch at := e.place.at; {
			case at == come: // ended already
			case at <= nowKey:
				ended = append(ended, job{e: e, rc: e.place.running, deadline: e.place.deadline})
				e.place.at = come
			case next.IsZero() || s.time(at).Before(next):
				next = s.time(at)
			}
		}
		if s.head < len(s.ready) && (next.IsZero() || next.After(now.Add(Tick))) {
			next = now.Add(Tick) // to see whether the runs waiting need more workers
		}
		s.at = next
		s.mu.Unlock()
		for i, j := range ended {
			if j.rc.end(j.deadline, context.DeadlineExceeded) {
				s.m.graceThenAbandon(j.e, j.rc, j.deadline)
			}
			ended[i] = job{}
		}
		s.ended = ended[:0]
		if !s.sleep(ctx, now, next) {
			return
		}
	}
}

// staffLocked sees that the runs ready are taken: by a worker at work
// already, or one more. When runs have waited since the loop's last wake,
// one more worker starts if the workers took runs meanwhile (they are
// behind), and one for each run that waited if they took none while every
// one of them was in a step (slow checkers hold them all); a worker woken
// but yet to take a run is on its way.
func (s *scheduler) staffLocked() {
	waiting := len(s.ready) - s.head
	want := 0
	switch busy := s.workers - s.idle; {
	case waiting == 0:
	case s.jumps:
		want = waiting
	case busy == 0 || s.waited == 0 && s.inStep == busy:
		// None at work, or every one in a step: one more takes the new runs now.
		want = 1
	case s.waited > 0 && s.taken == 0 && s.inStep == busy:
		want = min(s.waited, waiting)
	case s.waited > 0 && s.taken > 0:
		want = 1
	}
	for ; want > 0; want-- {
		if s.idle > 0 {
			s.idle-- // counted out here, so that one Signal wakes one worker
			s.more.Signal()
		} else {
			s.workers++
			go s.work()
		}
	}
	s.waited, s.taken = waiting, 0
}

// sleep waits until at (forever when it is zero), a kick or the end of ctx;
// false for the last.
func (s *scheduler) sleep(ctx context.Context, now, at time.Time) bool {
	var fire <-chan time.Time
	switch _, system := s.m.clock.(systemClock); {
	case at.IsZero() || s.jumps: // nothing queued, or the entries' timers kick
	case system:
		if s.timer == nil {
			s.timer = time.NewTimer(at.Sub(now))
		} else {
			s.timer.Reset(at.Sub(now))
		}
		defer s.timer.Stop()
		fire = s.timer.C
	default:
		t := s.m.clock.NewTimer(at.Sub(now))
		defer t.Stop()
		fire = t.C()
	}
	select {
	case <-fire:
	case <-s.kick:
	case <-ctx.Done():
		return false
	}
	return true
}

// work is a worker: it takes the oldest run ready and takes its step, and
// again, waiting while none is ready, until enough others wait or the
// scheduler stops.
func (s *scheduler) work() {
	// The context of the worker's runs, armed again for each, so that a run
	// allocates nothing. A run that outlives its deadline and grace keeps
	// it, and its worker, until it returns.
	rc := &runContext{values: s.m.values}
	stepping := false
	defer func() {
		if stepping { // the checker ended this goroutine (runtime.Goexit)
			s.mu.Lock()
			s.workers--
			s.inStep--
			s.mu.Unlock()
		}
	}()
	s.mu.Lock()
	for {
		for s.head == len(s.ready) {
			if s.stopped || s.idle >= maxIdleWorkers {
				s.workers--
				s.mu.Unlock()
				return
			}
			s.idle++
			s.more.Wait() // staffLocked counts it out of idle when it signals
			if s.stopped {
				s.idle-- // not counted out: woken by the Broadcast
			}
		}
		j := s.ready[s.head]
		s.ready[s.head] = job{}
		if s.head++; s.head == len(s.ready) {
			s.ready, s.head = s.ready[:0], 0
			if cap(s.ready) > maxKeptReady {
				s.ready = nil // the runs of a start or a Reset: no tick has as many
			}
		}
		if s.waited > 0 {
			s.waited--
		}
		s.taken++
		stepping = true
		s.inStep++
		s.mu.Unlock()
		s.m.step(j.e, j.s, rc)
		if rc.handedOut() {
			rc = &runContext{values: s.m.values}
		}
		s.mu.Lock()
		s.inStep--
		stepping = false
	}
}

// queue is a heap of entries by when they wake. Each keeps its key beside
// it, so that ordering reads the queue's array only, not the entries. It is
// container/heap's algorithm on the type itself: through heap.Interface,
// every push and pop would box a waking, an allocation per run.
type queue []waking

type waking struct {
	key int64 // its place.at as nanoseconds from the scheduler's base
	e   *entry
}

func (q queue) set(i int, w waking) {
	q[i] = w
	w.e.place.index = int32(i)
}

func (q *queue) push(w waking) {
	*q = append(*q, w)
	q.up(len(*q) - 1)
}

// remove takes out the entry at i.
func (q *queue) remove(i int) {
	old := *q
	last := len(old) - 1
	e := old[i].e
	if i != last {
		old.set(i, old[last])
	}
	old[last] = waking{}
	*q = old[:last]
	if i != last {
		q.fix(i)
	}
	e.place.index = -1
}

// fix restores the order after the key at i changed.
func (q queue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q queue) up(i int) {
	w := q[i]
	for i > 0 {
		parent := (i - 1) / 2
		if q[parent].key <= w.key {
			break
		}
		q.set(i, q[parent])
		i = parent
	}
	q.set(i, w)
}

// down moves the entry at i down to its place; it reports whether it moved.
func (q queue) down(i int) bool {
	w, start := q[i], i
	for {
		child := 2*i + 1
		if child >= len(q) {
			break
		}
		if right := child + 1; right < len(q) && q[right].key < q[child].key {
			child = right
		}
		if w.key <= q[child].key {
			break
		}
		q.set(i, q[child])
		i = child
	}
	q.set(i, w)
	return i > start
}

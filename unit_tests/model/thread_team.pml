/* A Promela model of korch's thread team (core/src/thread_team), checked with spin.
 * docs/thread-team-model.md maps every variable and step below to the code, says what is
 * abstracted and why, and lists the properties checked.
 *
 * One configuration is chosen at compile time (spin -DCONFIG_...):
 *   CONFIG_CHAIN   team 0 (2 threads) publishes work and threads to team 1 (2 threads, started
 *                  with none active: it runs on the threads team 0 hands on)
 *   CONFIG_FANIN   teams 0 and 1 both publish work to team 2; team 0 also publishes its threads
 *   CONFIG_CYCLES  one team of 3 threads, several cycles, the waiter may join the cycle
 * Broken variants, each expected to fail:
 *   BUG_MODE_AFTER_SIGNAL        start_cycle signals the threads before it sets RunningOpen
 *   BUG_UNFORWARDED_ACTIVATION   an unneeded activation is not handed to the thread subscriber
 */

#define NONE 255
#define MAXW 3                       /* thread slots per team (unused slots stay UNUSED) */
#define W(t, i) ((t) * MAXW + (i))   /* the slot of thread i of team t */

/* TeamMode */
#define IDLE 0
#define OPEN 1      /* RunningOpen */
#define CLOSED 2    /* RunningClosed */
#define NOMORE 3    /* RunningNoMoreWork */

/* Worker::signal */
#define SIG_NONE 0
#define SIG_ACT 1     /* activateThread */
#define SIG_TRANS 2   /* transitionThread */

/* Where a thread is: on idle_parked_, on waiting_parked_, or off both lists (an event is on
 * its way to it, or it runs) */
#define UNUSED 0
#define IDLE_PARKED 1
#define WAIT_PARKED 2
#define OFF_LISTS 3

/* WaitSlot of the caller in wait() */
#define NO_WAITER 0
#define WAITING 1
#define RELEASED 2

/* What a runner does next, after the critical section it just left (unlocked calls into the
 * subscriber teams, and finish_cycle's waits) */
#define S_DONE 0          /* back to park (a team thread) or to wait (the caller) */
#define S_ITEM 1          /* the routine ran on an item: deliver it (deliver_one) */
#define S_EOC 2           /* run_end_of_cycle delivers its output */
#define S_GO_IDLE 3       /* go_idle: forward_threads(1) while still Computing */
#define S_IDLE_TO_IDLE 4  /* worker_main: an unneeded activation is forwarded (IdleToIdle) */
#define S_FIN_THREADS 5   /* finish_cycle: forward the revoked activations */
#define S_FIN_CLOSE 6     /* finish_cycle: receive_close on the work subscriber */
#define S_FIN_WAIT 7      /* finish_cycle: wait_until(outbound_ == 0) */
#define S_STOP 8          /* work_while_waiting: no parked thread to stand in for */

/* ---- configurations: per team t, CFG(t, value for team 0, team 1, team 2) ---- */
#define CFG(t, a, b, c) (((t) == 0) * (a) + ((t) == 1) * (b) + ((t) == 2) * (c))

#ifdef WITH_END_OF_CYCLE
#define CHAIN_EOC 1
#else
#define CHAIN_EOC 0
#endif

#if defined(CONFIG_CHAIN)
#define NT 2
#ifndef CYCLES
#define CYCLES 1
#endif
#define NMAX(t) CFG(t, 2, 2, 0)
#define NACTIVE(t) CFG(t, 2, 0, 0)      /* threads activated by start_cycle */
#define ITEMS(t) CFG(t, 2, 0, 0)        /* items the caller enqueues */
#define WSUB(t) CFG(t, 1, NONE, NONE)   /* work subscriber */
#define TSUB(t) CFG(t, 1, NONE, NONE)   /* thread subscriber */
#define NWPUBS(t) CFG(t, 0, 1, 0)       /* work publisher teams */
#define NTPUBS(t) CFG(t, 0, 1, 0)       /* thread publisher teams */
#define EOC(t) CFG(t, CHAIN_EOC, 0, 0)  /* the routine has an end-of-cycle step (one output) */
#define WORKS(t) 1                      /* TeamOptions::waiter_works */
#define JOINS(t) 0                      /* TeamOptions::waiter_joins */
#define EXPECTED(t) CFG(t, 2, 2 + CHAIN_EOC, 0)  /* items a team must receive per cycle */
#elif defined(CONFIG_FANIN)
#define NT 3
#ifndef CYCLES
#define CYCLES 1
#endif
#define NMAX(t) CFG(t, 1, 1, 2)
#define NACTIVE(t) CFG(t, 1, 1, 1)
#define ITEMS(t) CFG(t, 1, 1, 0)
#define WSUB(t) CFG(t, 2, 2, NONE)
#define TSUB(t) CFG(t, 2, NONE, NONE)
#define NWPUBS(t) CFG(t, 0, 0, 2)
#define NTPUBS(t) CFG(t, 0, 0, 1)
#define EOC(t) CFG(t, 0, 1, 0)
#define WORKS(t) 1
#define JOINS(t) 0
#define EXPECTED(t) CFG(t, 1, 1, 3)
#elif defined(CONFIG_CYCLES)
#define NT 1
#ifndef CYCLES
#define CYCLES 3
#endif
#define NMAX(t) 3
#define NACTIVE(t) 2
#define ITEMS(t) 2
#define WSUB(t) NONE
#define TSUB(t) NONE
#define NWPUBS(t) 0
#define NTPUBS(t) 0
#define EOC(t) 1
#define WORKS(t) 1
#define JOINS(t) 1
#define EXPECTED(t) 2
#else
#error "choose a configuration: -DCONFIG_CHAIN, -DCONFIG_FANIN or -DCONFIG_CYCLES"
#endif

/* The end-of-cycle step runs when the thread deciding is the last Computing one. A thread in
 * go_idle stays counted as Computing while it forwards itself, so the code counts those threads
 * apart (ThreadTeam::n_leaving_) and does not take them as still computing. BUG_EOC_COUNTS_LEAVING
 * drops that count: the last thread with an item can then see two and skip the step. */
#ifndef BUG_EOC_COUNTS_LEAVING
byte leaving[NT];
#define LEAVING(t) leaving[t]
#define LEAVE(t) leaving[t]++
#define UNLEAVE(t) leaving[t]--
#else
#define LEAVING(t) 0
#define LEAVE(t) skip
#define UNLEAVE(t) skip
#endif

/* ---- the EFSM state of each team (ThreadTeam's members guarded by mutex_) ---- */
byte mode[NT];
byte n_idle[NT];           /* N_i, pending activations included */
byte n_waiting[NT];        /* N_w */
byte n_computing[NT];      /* N_c */
byte n_to_activate[NT];
byte transitions_in_flight[NT];
byte n_queued[NT];         /* N_Q */
byte sig[NT * MAXW];       /* Worker::signal */
byte where[NT * MAXW];     /* idle_parked_ / waiting_parked_ membership */
bool finishing[NT];
byte outbound[NT];         /* calls into subscribers in flight */
byte closes_pending[NT];   /* publisher_closes_pending_ + external_closes_pending_ */
bool link_closed[NT];      /* PublisherLink::closed of publisher t at its work subscriber */
bool eoc_ran[NT];          /* end_of_cycle_ran_ */
byte waiter[NT];           /* the WaitSlot of the one caller in wait() */

/* ---- bookkeeping for the properties (the CycleReport, and what the checks need) ---- */
byte enqueued[NT];         /* items accepted this cycle (from the caller or publishers) */
byte processed[NT];
byte delivered[NT];        /* outputs of team t its work subscriber accepted this cycle */
byte activations[NT];      /* threads activated this cycle (start, received, joined) */
byte threads_forwarded[NT];
byte started[NT];          /* cycles started: subscribers start before their publishers */
byte waited[NT];           /* cycles whose wait() returned */
bool set_up;               /* init has made the teams */

/* The usage rule "call wait() on a publisher before its subscribers": a team starts its next
 * cycle only after its publishers' wait() returned for the last one (NO_WAIT_ORDER drops it). */
#ifdef NO_WAIT_ORDER
#define PUBLISHERS_WAITED(t, c) true
#else
#define PUBLISHER_WAITED(p, t, c) ((p) >= NT || (WSUB(p) != (t) && TSUB(p) != (t)) || waited[p] >= (c))
#define PUBLISHERS_WAITED(t, c) (PUBLISHER_WAITED(0, t, c) && PUBLISHER_WAITED(1, t, c) && PUBLISHER_WAITED(2, t, c))
#endif

#define COUNT_WHERE(t, k) ((where[W(t, 0)] == (k)) + (where[W(t, 1)] == (k)) + (where[W(t, 2)] == (k)))
#define COUNT_SIG(t, s) ((sig[W(t, 0)] == (s)) + (sig[W(t, 1)] == (s)) + (sig[W(t, 2)] == (s)))

/* The spec invariants of one team, true between any two critical sections. */
#define TEAM_OK(t) ((t) >= NT || !set_up || ( \
  n_idle[t] + n_waiting[t] + n_computing[t] == NMAX(t) && \
  (mode[t] != CLOSED || n_queued[t] > 0) && \
  (mode[t] != NOMORE || n_queued[t] == 0) && \
  (mode[t] != IDLE || (n_queued[t] == 0 && n_idle[t] == NMAX(t) && n_to_activate[t] == 0)) && \
  n_to_activate[t] == COUNT_SIG(t, SIG_ACT) && \
  transitions_in_flight[t] == COUNT_SIG(t, SIG_TRANS) && \
  n_idle[t] == COUNT_WHERE(t, IDLE_PARKED) + n_to_activate[t] && \
  n_waiting[t] == COUNT_WHERE(t, WAIT_PARKED) + transitions_in_flight[t] && \
  n_computing[t] + n_to_activate[t] + transitions_in_flight[t] == COUNT_WHERE(t, OFF_LISTS)))

/* Any state that breaks an invariant enables this step, so the search reports it. */
active proctype invariants() {
end_watch:
  atomic {
    !(TEAM_OK(0) && TEAM_OK(1) && TEAM_OK(2)) ->
    assert(TEAM_OK(0)); assert(TEAM_OK(1)); assert(TEAM_OK(2))
  }
}

/* Locals of every runner (a team thread, or the caller running items in wait()). */
#define RUNNER_LOCALS \
  byte step = S_DONE; byte me = NONE; byte w; byte k; byte revoked; byte signal; \
  bool refused; bool fin; byte sub_revoked; byte sub

/* Names for the narration of counterexamples (hidden: not part of the state). */
mtype = { Idle, RunningOpen, RunningClosed, RunningNoMoreWork, activateThread, transitionThread };
hidden mtype shown_mode;
hidden mtype shown_event;

inline name_mode(t) {
  if
  :: mode[t] == IDLE -> shown_mode = Idle
  :: mode[t] == OPEN -> shown_mode = RunningOpen
  :: mode[t] == CLOSED -> shown_mode = RunningClosed
  :: mode[t] == NOMORE -> shown_mode = RunningNoMoreWork
  fi
}

/* ---- sending events to threads (ThreadTeam::activate, wake_*_waiting) ---- */

/* pop_preferring_awake: which parked thread is taken depends on timing; any one may be. */
inline pick(t, kind) {
  if
  :: where[W(t, 0)] == kind -> w = W(t, 0)
  :: where[W(t, 1)] == kind -> w = W(t, 1)
  :: where[W(t, 2)] == kind -> w = W(t, 2)
  fi
}

/* A thread activated while RunningOpen has nothing queued gets its activation in place: the
   activating thread makes its Idle -> Waiting transition (receive_activations_in_place). The model
   also lets the thread receive it itself, so both interleavings are checked. */
inline activate(t, n) {
  k = 0;
  do
  :: k < n -> pick(t, IDLE_PARKED);
              if
              :: mode[t] == OPEN && n_queued[t] == 0 -> where[w] = WAIT_PARKED; n_idle[t]--; n_waiting[t]++
              :: true -> where[w] = OFF_LISTS; sig[w] = SIG_ACT; n_to_activate[t]++
              fi;
              activations[t]++; k++
  :: else -> break
  od
}

inline wake_one_waiting(t) {
  pick(t, WAIT_PARKED); where[w] = OFF_LISTS; sig[w] = SIG_TRANS; transitions_in_flight[t]++
}

/* AwakenOnNoMoreWork. Without a thread subscriber or end-of-cycle step, a Waiting thread that
   sleeps, or whose transitionThread is in flight and unreceived, is taken to Idle in place
   (receive_transitions_in_place); the caller of after_close then finishes the cycle if no thread
   is left active. Which threads sleep depends on timing, so any of them may. */
#define IN_PLACE(t) (TSUB(t) == NONE && !EOC(t))
inline wake_all_waiting(t) {
  k = 0;
  do
  :: k < MAXW -> if
                 :: where[W(t, k)] == WAIT_PARKED ->
                    if
                    :: IN_PLACE(t) -> where[W(t, k)] = IDLE_PARKED; n_waiting[t]--; n_idle[t]++
                    :: true -> where[W(t, k)] = OFF_LISTS; sig[W(t, k)] = SIG_TRANS; transitions_in_flight[t]++
                    fi
                 :: IN_PLACE(t) && sig[W(t, k)] == SIG_TRANS ->
                    sig[W(t, k)] = SIG_NONE; where[W(t, k)] = IDLE_PARKED; transitions_in_flight[t]--;
                    n_waiting[t]--; n_idle[t]++
                 :: else
                 fi; k++
  :: else -> break
  od
}

/* finish_cycle: activations still in flight are taken back (the threads stay Idle). */
inline revoke(t, r) {
  r = 0; k = 0;
  do
  :: k < MAXW -> if
                 :: sig[W(t, k)] == SIG_ACT ->
                    sig[W(t, k)] = SIG_NONE; where[W(t, k)] = IDLE_PARKED; n_to_activate[t]--; r++
                 :: else
                 fi; k++
  :: else -> break
  od
}

/* ---- the end of a cycle (finish_cycle), in the steps the code takes between its unlocks ---- */

/* The last lines of finish_cycle: outputs delivered, the waiter is released. */
inline release_waiter(t) {
  finishing[t] = false;
  assert(processed[t] == enqueued[t] && enqueued[t] == EXPECTED(t));  /* nothing lost, nothing twice */
  assert(WSUB(t) == NONE || delivered[t] == processed[t] + eoc_ran[t]);  /* CompMustEnqueue */
  assert(TSUB(t) == NONE || threads_forwarded[t] == activations[t]);  /* ForwardThreads, IdleToIdle */
  assert(!EOC(t) || eoc_ran[t] == (processed[t] > 0));
  assert(waiter[t] != RELEASED);  /* one waiter per cycle, released once */
  if
  :: waiter[t] == WAITING -> waiter[t] = RELEASED; printf("team %d: cycle_finished, wait() released\n", t)
  :: else  /* the cycle ended before wait() was called: wait() returns at once */
  fi
}

inline finish_wait_locked(t) {
  if
  :: outbound[t] == 0 -> release_waiter(t); step = S_DONE
  :: else -> step = S_FIN_WAIT
  fi
}

inline finish_close_locked(t) {
  if
  :: WSUB(t) != NONE -> outbound[t]++; step = S_FIN_CLOSE
  :: else -> finish_wait_locked(t)
  fi
}

/* NoMoreWork_TransitionToIdle, and a close that finds no thread active. */
inline finish_locked(t) {
  assert(n_idle[t] == NMAX(t) && n_queued[t] == 0);
  revoke(t, revoked);
  mode[t] = IDLE;
  printf("team %d: -> Idle (%d activations revoked)\n", t, revoked);
  finishing[t] = true;
  if
  :: revoked > 0 && TSUB(t) != NONE ->
     outbound[t]++; threads_forwarded[t] = threads_forwarded[t] + revoked; step = S_FIN_THREADS
  :: else -> finish_close_locked(t)
  fi
}

/* A subscriber's finish_cycle run by the publisher's thread inside receive_close. The
 * configurations give subscribers no subscribers of their own, so it is one critical section. */
inline subscriber_finish(s) {
  assert(WSUB(s) == NONE && TSUB(s) == NONE && outbound[s] == 0);
  assert(n_idle[s] == NMAX(s) && n_queued[s] == 0);
  revoke(s, sub_revoked);
  mode[s] = IDLE;
  printf("team %d: -> Idle (closed by its last publisher)\n", s);
  finishing[s] = true;
  release_waiter(s)
}

/* after_close: leave RunningOpen once every publisher has closed; fin: go Idle now. */
inline after_close(t) {
  fin = false;
  if
  :: closes_pending[t] > 0
  :: else ->
     if
     :: n_queued[t] > 0 -> mode[t] = CLOSED; printf("team %d: -> RunningClosed\n", t)
     :: else ->
        if
        :: n_waiting[t] + n_computing[t] > 0 -> mode[t] = NOMORE; printf("team %d: -> RunningNoMoreWork (close)\n", t); wake_all_waiting(t);  /* AwakenOnNoMoreWork */
           if
           :: n_waiting[t] + n_computing[t] == 0 -> fin = true  /* every thread went Idle in place */
           :: else
           fi
        :: else -> fin = true
        fi
     fi
  fi
}

/* ---- a subscriber's entry points, called by a publisher's thread (one critical section) ---- */

/* receive_item -> push_if_open */
inline receive_item(s, from) {
  if
  :: mode[s] == OPEN ->
     n_queued[s]++; enqueued[s]++; delivered[from]++; refused = false;
     if
     :: transitions_in_flight[s] == 0 && COUNT_WHERE(s, WAIT_PARKED) > 0 -> wake_one_waiting(s)
     :: else
     fi
  :: else -> refused = true  /* NoEnqueue: a publisher must never find its subscriber not open */
  fi
}

inline receive_threads(s, n) {
  if
  :: mode[s] == IDLE -> assert(TSUB(s) == NONE)   /* forwarded on: to nobody */
  :: else ->
     assert(n <= COUNT_WHERE(s, IDLE_PARKED));    /* ThreadBalance */
     if
     :: mode[s] == NOMORE -> assert(TSUB(s) == NONE)
     :: else -> activate(s, n)
     fi
  fi
}

inline receive_close(s, from) {
  if
  :: mode[s] != OPEN || link_closed[from] -> refused = true
  :: else ->
     refused = false; link_closed[from] = true; closes_pending[s]--;
     printf("team %d: closed by work publisher %d\n", s, from);
     after_close(s);
     if
     :: fin -> subscriber_finish(s)
     :: else
     fi
  fi
}

/* ---- a runner's work (ThreadTeam::run_items and go_idle), with the mutex held ---- */

inline go_idle_locked(t) {
  n_computing[t]--; n_idle[t]++; where[me] = IDLE_PARKED;
  printf("team %d thread %d: -> Idle\n", t, me - t * MAXW);
  if
  :: n_computing[t] == 0 && n_waiting[t] == 0 -> finish_locked(t)
  :: else -> step = S_DONE
  fi
}

/* One pass of run_items' loop, counted as Computing: take an item, or go Waiting, or finish. */
inline run_locked(t) {
  if
  :: n_queued[t] > 0 ->
     n_queued[t]--; printf("team %d thread %d: takes an item\n", t, me - t * MAXW);
     if
     :: mode[t] == CLOSED && n_queued[t] == 0 -> mode[t] = NOMORE; printf("team %d: -> RunningNoMoreWork (last item taken)\n", t); wake_all_waiting(t)  /* Closed_Transition */
     :: else ->
        if
        :: n_queued[t] > 0 && transitions_in_flight[t] == 0 && COUNT_WHERE(t, WAIT_PARKED) > 0 ->
           wake_one_waiting(t)  /* wake chaining */
        :: else
        fi
     fi;
     if
     :: WSUB(t) != NONE -> outbound[t]++
     :: else
     fi;
     step = S_ITEM
  :: else ->
     if
     :: mode[t] == OPEN -> n_computing[t]--; n_waiting[t]++; where[me] = WAIT_PARKED; step = S_DONE;
        printf("team %d thread %d: -> Waiting\n", t, me - t * MAXW)
     :: else ->
        assert(mode[t] == NOMORE);  /* RunningClosed never holds an empty queue */
        if
        :: EOC(t) && n_computing[t] - LEAVING(t) == 1 && n_waiting[t] == 0 && processed[t] > 0 && !eoc_ran[t] ->
           eoc_ran[t] = true;  /* run_end_of_cycle */
           printf("team %d thread %d: runs the end-of-cycle step\n", t, me - t * MAXW);
           if
           :: WSUB(t) != NONE -> outbound[t]++
           :: else
           fi;
           step = S_EOC
        :: else ->  /* go_idle: ForwardThreads while still Computing */
           if
           :: TSUB(t) != NONE -> outbound[t]++; threads_forwarded[t]++; step = S_GO_IDLE; LEAVE(t);
              printf("team %d thread %d: go_idle, forwards itself (still Computing)\n", t, me - t * MAXW)
           :: else -> go_idle_locked(t)
           fi
        fi
     fi
  fi
}

/* The unlocked calls and the critical sections after them, until the runner parks. */
inline run_steps(t) {
  do
  :: step == S_DONE -> break
  :: step == S_ITEM ->
     if
     :: WSUB(t) != NONE -> atomic { sub = WSUB(t); receive_item(sub, t) }; assert(!refused)
     :: else
     fi;
     atomic {
       if
       :: WSUB(t) != NONE -> outbound[t]--
       :: else
       fi;
       processed[t]++;
       run_locked(t)
     }
  :: step == S_EOC ->
     if
     :: WSUB(t) != NONE -> atomic { sub = WSUB(t); receive_item(sub, t) }; assert(!refused)
     :: else
     fi;
     atomic {
       if
       :: WSUB(t) != NONE -> outbound[t]--
       :: else
       fi;
       run_locked(t)
     }
  :: step == S_GO_IDLE ->
     atomic { sub = TSUB(t); receive_threads(sub, 1) };
     atomic { outbound[t]--; UNLEAVE(t); go_idle_locked(t) }
  :: step == S_IDLE_TO_IDLE ->
     atomic { sub = TSUB(t); receive_threads(sub, 1) };
     atomic { outbound[t]--; step = S_DONE }
  :: step == S_FIN_THREADS ->
     atomic { sub = TSUB(t); receive_threads(sub, revoked) };
     atomic { outbound[t]--; finish_close_locked(t) }
  :: step == S_FIN_CLOSE ->
     atomic { sub = WSUB(t); receive_close(sub, t) };
     assert(!refused);
     atomic { outbound[t]--; finish_wait_locked(t) }
  :: step == S_FIN_WAIT ->
     atomic { outbound[t] == 0 -> release_waiter(t); step = S_DONE }
  od
}

/* ---- a team thread: ThreadTeam::worker_main ---- */
proctype worker(byte t; byte self) {
  RUNNER_LOCALS;
  me = self;
end_parked:
  do
  :: atomic {
       sig[me] != SIG_NONE ->  /* park() returns: an event arrived */
       signal = sig[me]; sig[me] = SIG_NONE;
       if
       :: signal == SIG_ACT -> shown_event = activateThread
       :: else -> shown_event = transitionThread
       fi;
       name_mode(t);
       printf("team %d thread %d: receives %e in %e\n", t, me - t * MAXW, shown_event, shown_mode);
       if
       :: signal == SIG_ACT ->
          n_to_activate[t]--;
          if
          :: mode[t] == OPEN || mode[t] == CLOSED -> n_idle[t]--; n_computing[t]++; run_locked(t)
          :: else ->  /* IdleToIdle: stay Idle, hand the thread on */
             where[me] = IDLE_PARKED;
#ifdef BUG_UNFORWARDED_ACTIVATION
             step = S_DONE
#else
             if
             :: TSUB(t) != NONE -> outbound[t]++; threads_forwarded[t]++; step = S_IDLE_TO_IDLE
             :: else -> step = S_DONE
             fi
#endif
          fi
       :: signal == SIG_TRANS ->
          transitions_in_flight[t]--; n_waiting[t]--; n_computing[t]++; run_locked(t)
       fi
     }
     run_steps(t)
  od
}

/* ---- the team's caller: start_cycle, enqueue, close_queue, wait (with waiter_works) ---- */

/* take_parked_thread (and join_in_place_of_idle_thread): the thread the caller stands in for. */
inline take_parked_thread(t) {
  me = NONE;
  if
  :: JOINS(t) && NTPUBS(t) == 0 && COUNT_WHERE(t, IDLE_PARKED) > 0 ->
     pick(t, IDLE_PARKED); me = w; where[me] = OFF_LISTS; activations[t]++; n_idle[t]--
  :: else ->
     if
     :: COUNT_WHERE(t, WAIT_PARKED) > 0 ->  /* a Waiting thread that sleeps */
        pick(t, WAIT_PARKED); me = w; where[me] = OFF_LISTS; n_waiting[t]--
     :: true  /* or every Waiting thread is still polling */
     fi;
     if
     /* An event not yet received: the code takes it when no thread computes, or at any time from a
        thread that leaves it to the caller (its core is contended); the model allows it always. */
     :: me == NONE && transitions_in_flight[t] > 0 ->  /* a transition not yet received */
        if
        :: sig[W(t, 0)] == SIG_TRANS -> me = W(t, 0)
        :: sig[W(t, 1)] == SIG_TRANS -> me = W(t, 1)
        :: sig[W(t, 2)] == SIG_TRANS -> me = W(t, 2)
        fi;
        sig[me] = SIG_NONE; transitions_in_flight[t]--; n_waiting[t]--
     :: true  /* or that thread is already running */
     fi;
     if
     :: me == NONE && n_to_activate[t] > 0 ->  /* an activation not yet received */
        if
        :: sig[W(t, 0)] == SIG_ACT -> me = W(t, 0)
        :: sig[W(t, 1)] == SIG_ACT -> me = W(t, 1)
        :: sig[W(t, 2)] == SIG_ACT -> me = W(t, 2)
        fi;
        sig[me] = SIG_NONE; n_to_activate[t]--; n_idle[t]--
     :: else
     fi
  fi
}

proctype caller(byte t) {
  RUNNER_LOCALS;
  byte cycle = 0;
  byte p;
  do
  :: cycle < CYCLES ->
     /* the runtime starts subscribers before their publishers (NoEnqueue) */
     (WSUB(t) == NONE || started[WSUB(t)] > cycle) && (TSUB(t) == NONE || started[TSUB(t)] > cycle) &&
     PUBLISHERS_WAITED(t, cycle);
     atomic {
       /* start_cycle: Idle, and the last cycle's outputs delivered */
       mode[t] == IDLE && !finishing[t] && outbound[t] == 0 ->
       assert(NACTIVE(t) <= COUNT_WHERE(t, IDLE_PARKED));
       enqueued[t] = 0; processed[t] = 0; delivered[t] = 0; activations[t] = 0;
       threads_forwarded[t] = 0; eoc_ran[t] = false;
       p = 0;
       do
       :: p < NT -> if
                    :: WSUB(p) == t -> link_closed[p] = false
                    :: else
                    fi; p++
       :: else -> break
       od;
       closes_pending[t] = NWPUBS(t) + (NWPUBS(t) == 0);
#ifndef BUG_MODE_AFTER_SIGNAL
       mode[t] = OPEN;  /* the mode changes before any thread is signalled */
       started[t]++;
#endif
       activate(t, NACTIVE(t));
       printf("team %d: start_cycle (cycle %d), activates %d thread(s)\n", t, cycle + 1, NACTIVE(t))
     }
#ifdef BUG_MODE_AFTER_SIGNAL
     atomic { mode[t] = OPEN; started[t]++ }
#endif
     k = 0;
     do
     :: k < ITEMS(t) ->
        atomic {  /* enqueue -> push_if_open */
          assert(mode[t] == OPEN);
          n_queued[t]++; enqueued[t]++;
          printf("team %d: enqueue\n", t);
          if
          :: transitions_in_flight[t] == 0 && COUNT_WHERE(t, WAIT_PARKED) > 0 -> wake_one_waiting(t)
          :: else
          fi
        };
        k++
     :: else -> break
     od;
     if
     :: NWPUBS(t) == 0 ->
        atomic {  /* close_queue */
          assert(mode[t] == OPEN && closes_pending[t] == 1);
          closes_pending[t]--;
          printf("team %d: close_queue\n", t);
          after_close(t);
          if
          :: fin -> finish_locked(t)  /* no thread active: straight to Idle */
          :: else -> step = S_DONE
          fi
        };
        run_steps(t)
     :: else
     fi;
     atomic {  /* wait() */
       if
       :: mode[t] == IDLE && !finishing[t] -> waiter[t] = RELEASED  /* the cycle is over already */
       :: else -> assert(waiter[t] == NO_WAITER); waiter[t] = WAITING
       fi
     };
     if
     :: WORKS(t) ->
        do  /* work_while_waiting */
        :: atomic {
             if
             :: waiter[t] == WAITING && n_queued[t] > 0 && (mode[t] == OPEN || mode[t] == CLOSED) ->
                take_parked_thread(t);
                if
                :: me != NONE -> printf("team %d: the caller in wait() runs as thread %d\n", t, me - t * MAXW)
                :: else
                fi;
                if
                :: me != NONE -> n_computing[t]++; run_locked(t)
                :: else -> step = S_STOP
                fi
             :: else -> step = S_STOP
             fi
           };
           if
           :: step == S_STOP -> break
           :: else -> run_steps(t)
           fi
        od
     :: else
     fi;
     atomic { waiter[t] == RELEASED -> waiter[t] = NO_WAITER; cycle++; waited[t] = cycle }
  :: else -> break
  od
}

init {
  byte t = 0;
  byte i;
  atomic {
    do
    :: t < NT ->
       n_idle[t] = NMAX(t);
       i = 0;
       do
       :: i < NMAX(t) -> where[W(t, i)] = IDLE_PARKED; run worker(t, W(t, i)); i++
       :: else -> break
       od;
       t++
    :: else -> break
    od;
    t = 0;
    set_up = true;
    do
    :: t < NT -> run caller(t); t++
    :: else -> break
    od
  }
}

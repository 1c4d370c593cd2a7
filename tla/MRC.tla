--------------------------------- MODULE MRC ---------------------------------
(***************************************************************************)
(* MRC (Multipath Reliable Connection) at the level of the Go state        *)
(* machine in statemachine/: one direction of one connection.              *)
(*                                                                         *)
(*   requester = QP A's statemachine.requester + statemachine.evTable      *)
(*   responder = QP B's statemachine.responder                             *)
(*   network   = a bag of packets: loss, duplication, trimming, ECN        *)
(*               marking and path failure are actions; reordering is       *)
(*               implicit (any packet in the bag may be delivered next).   *)
(*                                                                         *)
(* Every action names the Go function it models.  The README maps each     *)
(* variable to its Go field and lists what is abstracted.                  *)
(***************************************************************************)
EXTENDS MRCTypes

VARIABLES
    \* ---- requester (QP A) ----
    qpState,      \* "RTS" | "ERROR"                       QP.state
    posted,       \* WRs posted so far                     requester.sq / sqLen (+ completed)
    nxt,          \* next PSN to send for the first time    requester.nxt
    una,          \* oldest unacknowledged PSN              requester.una
    inflight,     \* PSNs with txInFlight                   txRing.fl & txInFlight
    sacked,       \* PSNs with txSACKed                     txRing.fl & txSACKed
    lost,         \* PSNs with txLost (retransmit set)      txRing.fl & txLost
    txEV,         \* EV of the last transmission, or the EV a NACK/timeout named   txRing.ev
    retx,         \* PSNs retransmitted at least once        txRing.fl & txRetx
    lossScan,     \* PSNs below it were judged by the reorder rule   requester.lossScan
    retries,      \* retry counter                          requester.retries
    sndOK,        \* send WRs completed successfully         completeSends / sqHead
    evState,      \* per-EV path state                      evTable.state
    probeOK,      \* consecutive good probe answers         evTable.probeOK
    probing,      \* EVs with a probe outstanding           evTable.flags & evProbing
    \* ---- responder (QP B) ----
    rspErr,       \* responder QP in ERROR                  QP.state == StateError
    epsn,         \* next PSN expected in order (cumulative ACK)   responder.epsn
    rbits,        \* PSNs received beyond epsn              rxRing.rcv
    held,         \* WriteIMMs stashed, not yet released    responder.stash[].valid
    early,        \* stashed WriteIMMs already delivered (FaultEarlyWIMM)   wimmSlot.early
    expRQ,        \* RQMSN of the next WriteIMM to release  responder.expRQMSN
    ecnRun,       \* CE marks in a row per EV               responder.runs
    \* ---- network and environment ----
    net,          \* bag of packets in flight
    failed,       \* EVs whose path has failed (black hole)
    netFaults,    \* loss/dup/trim/ecn/delay events used so far
    ctlOps,       \* controller operations used so far
    \* ---- observations (ghost) ----
    placeCount,   \* placements per PSN                     Output.Placements / EvPlaced
    rcvCQ,        \* WriteIMM receive completions, in order Output.Completions (Recv) / EvIMMDelivered
    nackEV,       \* EV of the latest recoverable NACK for p since p was last sent (NoEV if none)  EvNACKReceived
    ghostRetries, \* retry events since una last advanced, counted independently of retries
    everSacked,   \* PSNs ever selectively acknowledged to the requester
    mem,          \* responder memory: PSN-sized slot (by address) -> tag of the bytes placed there
    owed          \* PSNs a recoverable NACK consumed owes a retransmission (OwedNext, not the actions)

reqVars   == <<qpState, posted, nxt, una, inflight, sacked, lost, txEV, retx, lossScan, retries, sndOK>>
evVars    == <<evState, probeOK, probing>>
rspVars   == <<rspErr, epsn, rbits, held, early, expRQ, ecnRun>>
envVars   == <<net, failed, netFaults, ctlOps>>
ghostVars == <<placeCount, rcvCQ, nackEV, ghostRetries, everSacked, mem>>
vars == <<reqVars, evVars, rspVars, envVars, ghostVars, owed>>

ASSUME /\ Bugs \subseteq BugNames
       /\ Variants \subseteq {"AvoidFallback", "KeepEVOnInferredLoss", "RetryInfinite", "KeepAvoidAfterStall"}
       /\ FailableEVs \subseteq EVs     \* EVs: numbers (traces) or model values (MRC_big: symmetry)
       /\ MPR \in Nat \ {0} /\ RetryLimit \in Nat /\ MinActive \in Nat
       /\ ProbeSuccesses \in Nat \ {0} /\ MaxWIMM \in Nat \ {0} /\ MaxWIMMDest \in Nat \ {0}
       /\ NetFaultKinds \subseteq {"loss", "dup", "trim", "ecn", "delay", "inject", "forge"}
       /\ \A i \in DOMAIN MsgLen : MsgLen[i] \in Nat \ {0}
       /\ DOMAIN MsgImm = DOMAIN MsgLen

-----------------------------------------------------------------------------
(* Helpers                                                                 *)

NetFault(kind) == kind \in NetFaultKinds /\ netFaults < NetFaultBudget /\ netFaults' = netFaults + 1

Window == IF "BeyondMPR" \in Bugs THEN 2 * MPR ELSE MPR        \* QP.inWindow

SendOn(b, pk) == IF pk.ev \in failed THEN b ELSE Put(b, pk)   \* a failed path black-holes

\* requester.wimm: WriteIMMs whose first packet was sent and that have not completed
WimmInFlight == Cardinality({m \in ImmMsgs : FirstPSN[m] < nxt /\ m > sndOK})

\* completeSends: complete, in post order, the WRs whose last PSN is below una
RECURSIVE Compl(_, _, _)
Compl(k, u, sk) ==
    IF k < NumMsgs /\ (LastPSN[k + 1] < u \/ ("CompleteOnSACK" \in Bugs /\ LastPSN[k + 1] \in sk))
    THEN Compl(k + 1, u, sk) ELSE k

\* evAllowed (ev.go): the EV state table; the controller may set GOOD, ASSUMED_BAD or DENIED
\* from any state (EV-ST-9, EV-ST-14)
EVAllowed(from, to, cause) ==
    IF cause = "Controller" THEN to \in {"GOOD", "ASSUMED_BAD", "DENIED"}
    ELSE CASE from = "GOOD" /\ to = "SKIP"                        -> cause \in {"SkipOnce", "Trimmed"}
           [] from \in {"GOOD", "SKIP"} /\ to = "ASSUMED_BAD"       -> cause \in {"AlwaysSkip", "Timeout", "InferredLoss"}
           [] from = "SKIP" /\ to = "GOOD"                        -> cause = "Rotation"
           [] from = "ASSUMED_BAD" /\ to = "GOOD"                 -> cause = "ProbeOK"
           [] from = "ASSUMED_BAD" /\ to = "SKIP"                 -> cause = "ProbeSkip"
           [] OTHER                                               -> FALSE

\* EVs outside ASSUMED_BAD and DENIED (setEV: len(t.e) - nBad - nDenied)
ActiveUsable(st) == Cardinality({e \in EVs : st[e] \in {"GOOD", "SKIP"}})

\* setEV (ev.go) as a function of the EV-state vector: the table, then the ev_min_active floor
SetEV(st, e, to, cause) ==
    LET from == st[e] IN
    IF from = to \/ ~EVAllowed(from, to, cause) THEN st
    ELSE IF to = "ASSUMED_BAD" /\ cause # "Controller" /\ ActiveUsable(st) - 1 < MinActive
         THEN st
         ELSE [st EXCEPT ![e] = to]

\* setEV clears probeOK and the probing flag of an EV entering ASSUMED_BAD
NewBad(st0, st1) == {e \in EVs : st1[e] = "ASSUMED_BAD" /\ st0[e] # "ASSUMED_BAD"}

\* rtoTimer, lowest expired PSN first: the timeout counts one retry event unless the EV
\* was already ASSUMED_BAD (LR-TMR-6), then setEV(ev, ASSUMED_BAD, CauseTimeout); the loop
\* stops when the QP fails.  Result: final EV states, retry counter, count of charged
\* retries, error flag.
RetryInc == IF "NoRetryCount" \in Bugs THEN 0 ELSE 1
\* Charge(r, k): counter r after k retry events.  Variant "RetryInfinite" is exp_cnt = 25
\* (LR-TMR-2: no limit): the counter saturates at RetryLimit, so the QP never fails on
\* retries and the state space stays finite.
Charge(r, k) == IF "RetryInfinite" \in Variants THEN Min2(r + k, RetryLimit) ELSE r + k
RECURSIVE FoldTimeout(_, _, _, _)
FoldTimeout(st, r, n, S) ==
    IF S = {} THEN [st |-> st, r |-> r, n |-> n, err |-> FALSE]
    ELSE LET p       == MinOf(S)
             e       == txEV[p]
             counted == st[e] # "ASSUMED_BAD" /\ p = una
             st1     == SetEV(st, e, "ASSUMED_BAD", "Timeout")
             r1      == IF counted THEN Charge(r, RetryInc) ELSE r
             n1      == IF counted THEN n + 1 ELSE n
         IN IF counted /\ r1 > RetryLimit
            THEN [st |-> st1, r |-> r1, n |-> n1, err |-> TRUE]
            ELSE FoldTimeout(st1, r1, n1, S \ {p})

\* goBackN (FaultGoBackN): every PSN after a lost one is queued again, SACKed or not
GBN(p) == IF "GoBackN" \in Bugs
          THEN {q \in PSNs : q > p /\ q < nxt /\ q \in inflight \cup sacked}
          ELSE {}

\* responder.verdict: the m field for an arrival on EV e
\* (RSP-SACK-3/4: the run restarts after an ALWAYS_SKIP)
Verdict(e, ce) ==
    IF ~ce THEN M_NONE
    ELSE IF AlwaysSkipAfter = 0 THEN M_SKIP_ONCE
    ELSE IF ecnRun[e] + 1 >= AlwaysSkipAfter THEN M_ALWAYS_SKIP ELSE M_SKIP_ONCE
EcnNext(e, ce) ==
    IF ~ce THEN [ecnRun EXCEPT ![e] = 0]
    ELSE IF AlwaysSkipAfter = 0 THEN ecnRun
    ELSE IF ecnRun[e] + 1 >= AlwaysSkipAfter THEN [ecnRun EXCEPT ![e] = 0]
    ELSE [ecnRun EXCEPT ![e] = @ + 1]

\* sendSACK (responder.go): the EV a SACK answering data packet pk reflects, the EV pk came on
\* (RSP-SACK-3); "RtxReflectFirstEV" answers a retransmission on the lowest EV instead.
AnswerEV(pk) == IF "RtxReflectFirstEV" \in Bugs /\ pk.rtx THEN MinOf(EVs) ELSE pk.ev

\* onData: advance the cumulative ACK over contiguous received PSNs
RECURSIVE Advance(_, _)
Advance(ep, rb) == IF ep \in rb THEN Advance(ep + 1, rb) ELSE ep

\* releaseIMM: number of WriteIMMs releasable in RQMSN order from k
RECURSIVE Release(_, _, _)
Release(k, h, ep) ==
    IF k < NumImm /\ ImmSeq[k + 1] \in h /\ LastPSN[ImmSeq[k + 1]] < ep
    THEN Release(k + 1, h, ep) ELSE k

MsgsDone(ep) == Cardinality({m \in Msgs : LastPSN[m] < ep})     \* responder.msnDone

\* Responder classification of an arriving data packet (onData, RSP-RCV-6)
RDist(pk)  == pk.psn - epsn
RIsDup(pk) == RDist(pk) < 0 \/ (RDist(pk) < MPR /\ pk.psn \in rbits)
RIsOOR(pk) == /\ ~RIsDup(pk) /\ "RspNoWindow" \notin Bugs
              /\ RDist(pk) >= MPR + (IF "RspWindowOffByOne" \in Bugs THEN 1 ELSE 0)
RIsNew(pk) == ~RIsDup(pk) /\ ~RIsOOR(pk)

\* The adversary's forged PSNs (NetFaultKinds \ni "forge"), outside every WR: -1, below the first
\* PSN (a duplicate whatever epsn is, as Go's initial cumulative ACK), and NumPSN + MPR, one past
\* the window even when every PSN has been received (out of window whatever epsn is: the window's
\* edge at the end of the PSN range).  A correct responder never takes either for new.
ForgedPSNs == IF "forge" \in NetFaultKinds THEN {-1, NumPSN + MPR} ELSE {}
RImmLast(p) == MsgImm[MsgOf[p]] /\ p = LastPSN[MsgOf[p]]
RWimmOverflow(p) == RImmLast(p) /\ Cardinality(held) >= MaxWIMMDest   \* stashIMM: r.n == len(r.stash)

Terminated == qpState = "ERROR" \/ (posted = NumMsgs /\ sndOK = NumMsgs)

\* Data.  PSN p carries the bytes of message MsgOf[p] at offset p - FirstPSN[MsgOf[p]]; its
\* content tag is p itself.  place (responder.go) writes them at the packet's address, the
\* slot of p; with "PlaceShifted" (Go FaultPlaceShifted) a packet that is not the first of its
\* message goes one slot lower.
NoData == -1
Place(m, p) == LET a == IF "PlaceShifted" \in Bugs /\ p # FirstPSN[MsgOf[p]] THEN p - 1 ELSE p
               IN [m EXCEPT ![a] = p]

-----------------------------------------------------------------------------
Init ==
    /\ qpState = "RTS"
    /\ posted = 0
    /\ nxt = 0
    /\ una = 0
    /\ inflight = {}
    /\ sacked = {}
    /\ lost = {}
    /\ txEV = [p \in PSNs |-> NoEV]
    /\ retx = {}
    /\ lossScan = 0
    /\ retries = 0
    /\ sndOK = 0
    /\ evState = [e \in EVs |-> "GOOD"]
    /\ probeOK = [e \in EVs |-> 0]
    /\ probing = {}
    /\ rspErr = FALSE
    /\ epsn = 0
    /\ rbits = {}
    /\ held = {}
    /\ early = {}
    /\ expRQ = 0
    /\ ecnRun = [e \in EVs |-> 0]
    /\ net = EmptyBag
    /\ failed = {}
    /\ netFaults = 0
    /\ ctlOps = 0
    /\ placeCount = [p \in PSNs |-> 0]
    /\ mem = [p \in PSNs |-> NoData]
    /\ rcvCQ = <<>>
    /\ nackEV = [p \in PSNs |-> NoEV]
    /\ ghostRetries = 0
    /\ everSacked = {}
    /\ owed = {}

-----------------------------------------------------------------------------
(* Requester actions                                                       *)

\* QP.Post: the application posts the next WR (in ERROR it completes at once with a flush error)
Post ==
    /\ posted < NumMsgs
    /\ posted' = posted + 1
    /\ UNCHANGED <<qpState, nxt, una, inflight, sacked, lost, txEV, retx, lossScan, retries, sndOK>>
    /\ UNCHANGED <<evVars, rspVars, envVars, ghostVars>>

\* sendNew (via pump): first transmission of PSN nxt on a GOOD EV (REQ-TX-1, MPR-WIN-1, WIMM-REQ-1, EV-SET-4)
SendNew(e) ==
    /\ qpState = "RTS"
    /\ lost = {}                          \* pump: retransmissions first (REQ-TX-2)
    /\ nxt < NumPSN
    /\ MsgOf[nxt] <= posted
    /\ nxt - una < Window                 \* inWindow
    /\ (MsgImm[MsgOf[nxt]] /\ nxt = FirstPSN[MsgOf[nxt]]) => WimmInFlight < MaxWIMM
    /\ evState[e] = "GOOD" \/ ("SendOnSkip" \in Bugs /\ evState[e] = "SKIP")   \* nextEV: usable = GOOD
    /\ inflight' = inflight \cup {nxt}
    /\ txEV' = [txEV EXCEPT ![nxt] = e]
    /\ nxt' = nxt + 1
    /\ net' = SendOn(net, DataPkt(nxt, e, FALSE))
    /\ UNCHANGED <<qpState, posted, una, sacked, lost, retx, lossScan, retries, sndOK>>
    /\ UNCHANGED <<evVars, rspVars, failed, netFaults, ctlOps, ghostVars>>

\* sendRetransmission (via pump): lowest lost PSN, on a GOOD EV other than txEV[p]
\* (the EV the NACK or timeout named, NoEV once a stall expiry freed it, AMB-44)
\* (LR-RTX-1..4, EV-ST-13)
Retransmit(e) ==
    /\ qpState = "RTS"
    /\ lost # {}
    /\ LET p == MinOf(lost) IN
       /\ p - una < Window
       /\ IF "ReuseNACKedEV" \in Bugs THEN e = txEV[p]
          ELSE \/ e # txEV[p] /\ evState[e] = "GOOD"
               \* Variant "AvoidFallback" (proposed fix of finding TLA-F1 in README.md): the named EV is
               \* used when it is the only GOOD EV left
               \/ /\ "AvoidFallback" \in Variants
                  /\ e = txEV[p] /\ evState[e] = "GOOD"
                  /\ \A x \in EVs \ {e} : evState[x] # "GOOD"
       /\ lost' = lost \ {p}
       /\ inflight' = inflight \cup {p}
       /\ txEV' = [txEV EXCEPT ![p] = e]
       /\ retx' = retx \cup {p}
       /\ nackEV' = [nackEV EXCEPT ![p] = NoEV]
       /\ net' = IF "RtxNotSent" \in Bugs THEN net ELSE SendOn(net, DataPkt(p, e, TRUE))
    /\ UNCHANGED <<qpState, posted, nxt, una, sacked, lossScan, retries, sndOK>>
    /\ UNCHANGED <<evVars, rspVars, failed, netFaults, ctlOps>>
    /\ UNCHANGED <<placeCount, mem, rcvCQ, ghostRetries, everSacked>>

\* enterError + clearFlight, or the normal outcome of a step
ReqOutcome(err, una1, inf1, lost1, sck1, nev1) ==
    IF err
    THEN /\ qpState' = "ERROR"
         /\ una' = nxt
         /\ inflight' = {} /\ lost' = {} /\ sacked' = {} /\ retx' = {}
         /\ nackEV' = [p \in PSNs |-> NoEV]
    ELSE /\ qpState' = qpState
         /\ una' = una1
         /\ inflight' = inf1 /\ lost' = lost1 /\ sacked' = sck1 /\ retx' = retx
         /\ nackEV' = nev1

\* No copy of p and no answer that would acknowledge or NACK p is in the network.  A timer
\* that expires otherwise is spurious: it costs one "delay" fault of the network budget.
Silent(p) ==
    ~\E pk \in DOMAIN net :
        \/ pk.t = "D" /\ pk.psn = p
        \/ pk.t = "N" /\ pk.psn = p
        \/ pk.t = "S" /\ (pk.cack > p \/ p \in pk.bits)
        \/ pk.t = "A" /\ pk.cack > p

\* rtoTimer: the PSNs of S time out together; each one is queued, its EV becomes
\* ASSUMED_BAD and it spends a retry unless its EV already was (LR-TMR-5/6/7, EV-ST-5)
Timeout(S) ==
    /\ qpState = "RTS"
    /\ S # {} /\ S \subseteq inflight
    /\ IF \A p \in S : Silent(p)
       THEN UNCHANGED netFaults
       ELSE NetFault("delay")      \* spurious expiry: the network delayed p beyond its RTO
    /\ LET f    == FoldTimeout(evState, retries, 0, S)
           st1  == f.st
           nb   == NewBad(evState, st1)
           g    == GBN(MinOf(S))
       IN /\ evState' = st1
          /\ probeOK' = [e \in EVs |-> IF e \in nb THEN 0 ELSE probeOK[e]]
          /\ probing' = probing \ nb
          /\ retries' = f.r
          \* the ghost counts from the environment's event, not from FoldTimeout: the expiry of
          \* una's timer on an EV that was not ASSUMED_BAD before the step (LR-TMR-5, LR-TMR-6)
          /\ ghostRetries' = Charge(ghostRetries, IF una \in S /\ evState[txEV[una]] # "ASSUMED_BAD" THEN 1 ELSE 0)
          /\ ReqOutcome(f.err, una, inflight \ (S \cup g), lost \cup S \cup g, sacked \ g, nackEV)
    /\ UNCHANGED <<posted, nxt, txEV, lossScan, sndOK>>
    /\ UNCHANGED <<rspVars, net, failed, ctlOps, placeCount, mem, rcvCQ, everSacked>>

\* stallTimer (requester.go; the fix of finding TLA-F1, LR-SM-3): a PSN queued for
\* retransmission that no EV can carry (the only GOOD EV is the one it must avoid,
\* EV-ST-13) still runs a timer; each expiry spends a retry, so the QP fails instead of
\* hanging (LR-TMR-6, LR-TMR-7).  The expiry also ends the oldest queued PSN's avoidance
\* of the EV its NACK or timeout named (txEV := NoEV, AMB-44): its retransmission is now
\* the timer's, so a PSN whose only working EV is the avoided one does not wait for good
\* (fabric finding F4).  The ghost nackEV forgets the NACK for the same reason.  With
\* Bugs = {"NoLostTimer"} there is no such timer: the behaviour of Go before the fix,
\* which MRC_bug_nolosttimer*.cfg show hanging.  Variant "KeepAvoidAfterStall" (Go's policy
\* Config.KeepAvoidAfterStall, the behaviour before AMB-44) leaves the avoidance in place,
\* which MRC_live_inf_keepavoid.cfg shows failing Progress when exp_cnt is infinite.
LostTimeout ==
    /\ "NoLostTimer" \notin Bugs
    /\ qpState = "RTS"
    /\ lost # {}
    /\ ~\E e \in EVs : ENABLED Retransmit(e)
    /\ ~\E e \in EVs : evState[e] = "SKIP"           \* endRotation would free an EV first
    /\ LET r1  == Charge(retries, RetryInc)
           err == r1 > RetryLimit
           p   == MinOf(lost)
       IN /\ retries' = r1
          /\ ghostRetries' = Charge(ghostRetries, 1)
          /\ txEV' = IF "KeepAvoidAfterStall" \in Variants THEN txEV ELSE [txEV EXCEPT ![p] = NoEV]
          /\ ReqOutcome(err, una, inflight, lost, sacked,
                        IF "KeepAvoidAfterStall" \in Variants THEN nackEV ELSE [nackEV EXCEPT ![p] = NoEV])
    /\ UNCHANGED <<posted, nxt, lossScan, sndOK, evVars, rspVars, envVars, placeCount, mem, rcvCQ, everSacked>>

\* probeResult: the EV-state part, from EV states st, probing flags pr and counts ok
ProbeState(st, pr, e, m) ==
    IF e \notin pr \/ st[e] # "ASSUMED_BAD" THEN st
    ELSE CASE m = M_NONE      -> IF probeOK[e] + 1 >= ProbeSuccesses
                                 THEN SetEV(st, e, "GOOD", "ProbeOK") ELSE st
           [] m = M_SKIP_ONCE -> SetEV(st, e, "SKIP", "ProbeSkip")
           [] OTHER           -> st
ProbeCount(st, pr, ok, e, m) ==
    IF e \notin pr \/ st[e] # "ASSUMED_BAD" THEN ok
    ELSE CASE m = M_NONE      -> [ok EXCEPT ![e] = Min2(@ + 1, ProbeSuccesses)]
           [] m = M_SKIP_ONCE -> ok
           [] OTHER           -> [ok EXCEPT ![e] = 0]

\* reorderLoss (EV-SM-5): each PSN of R inferred lost, lowest first, implicates the EV it was
\* sent on as a timeout does: setEV(txEV[p], ASSUMED_BAD, CauseInferredLoss), subject to the
\* ev_min_active floor.  No retry is charged.  Variant "KeepEVOnInferredLoss" is Go's policy
\* Config.KeepEVOnInferredLoss: the EV is left alone.
RECURSIVE FoldInferred(_, _)
FoldInferred(st, R) ==
    IF R = {} \/ "KeepEVOnInferredLoss" \in Variants THEN st
    ELSE LET p == MinOf(R) IN FoldInferred(SetEV(st, txEV[p], "ASSUMED_BAD", "InferredLoss"), R \ {p})

\* onSACK: cumulative ACK, bitmap, m verdict on the reflected EV or probe result (LR-SACK-1..5, EV-PRB-4)
ReqRecvSACK(pk) ==
    /\ qpState = "RTS"
    /\ pk.t = "S"
    /\ net' = Take(net, pk)
    /\ IF pk.cack + (IF "CackOffByOne" \in Bugs THEN 1 ELSE 0) > nxt
       THEN UNCHANGED <<reqVars, evVars, ghostVars>>          \* IgnoreInvalidAck
       ELSE LET c    == IF "CackOffByOne" \in Bugs THEN pk.cack + 1 ELSE pk.cack
                una1 == Max2(una, c)
                cum  == {p \in PSNs : una <= p /\ p < una1}
                sb   == {p \in pk.bits : una1 <= p /\ p < nxt /\ p \notin sacked}
                done == cum \cup sb
                e    == pk.ev
                sck1 == (sacked \ cum) \cup sb
                inf1 == inflight \ done
                \* reorderLoss (LR-RTX-4): first transmissions still in flight although a PSN
                \* ReorderGuard beyond them was acknowledged are queued (no retry charged),
                \* and each implicates the EV it went out on (EV-SM-5), before the m verdict
                ls0  == Max2(lossScan, una1)
                high == Max2(una1, IF sck1 = {} THEN 0 ELSE MaxOf(sck1) + 1)   \* requester.highAck
                lim  == IF ReorderGuard = 0 THEN ls0 ELSE Max2(ls0, Min2(high - ReorderGuard, nxt))
                rl   == {q \in inf1 : ls0 <= q /\ q < lim /\ q \notin retx}
                st0  == FoldInferred(evState, rl)
                pr0  == probing \ NewBad(evState, st0)
                ok0  == [x \in EVs |-> IF x \in NewBad(evState, st0) THEN 0 ELSE probeOK[x]]
                st1  == IF pk.pr THEN ProbeState(st0, pr0, e, pk.m)
                        ELSE IF pk.m = M_SKIP_ONCE THEN SetEV(st0, e, "SKIP", "SkipOnce")
                        ELSE IF pk.m = M_ALWAYS_SKIP THEN SetEV(st0, e, "ASSUMED_BAD", "AlwaysSkip")
                        ELSE st0
                nb   == NewBad(st0, st1)
            IN /\ una' = una1
               /\ inflight' = inf1 \ rl
               /\ lost' = (lost \ done) \cup rl
               /\ sacked' = sck1
               /\ lossScan' = lim
               /\ retx' = retx \ cum
               /\ txEV' = [p \in PSNs |-> IF p \in cum THEN NoEV ELSE txEV[p]]
               /\ nackEV' = [p \in PSNs |-> IF p \in done THEN NoEV ELSE nackEV[p]]
               /\ retries' = IF una1 > una THEN 0 ELSE retries
               /\ ghostRetries' = IF una1 > una THEN 0 ELSE ghostRetries
               /\ sndOK' = Compl(sndOK, una1, sck1)
               /\ everSacked' = everSacked \cup sb
               /\ evState' = st1
               /\ probeOK' = IF pk.pr THEN ProbeCount(st0, pr0, ok0, e, pk.m)
                             ELSE [x \in EVs |-> IF x \in nb THEN 0 ELSE ok0[x]]
               /\ probing' = IF pk.pr THEN pr0 \ {e} ELSE pr0 \ nb
               /\ UNCHANGED <<qpState, posted, nxt, placeCount, mem, rcvCQ>>
    /\ UNCHANGED <<rspVars, failed, netFaults, ctlOps>>

\* onNACK (LR-NACK-1..6, EV-ST-3)
ReqRecvNACK(pk) ==
    /\ qpState = "RTS"
    /\ pk.t = "N"
    /\ net' = Take(net, pk)
    /\ LET p == pk.psn
           e == pk.ev
           r == pk.reason
       IN CASE r = NACK_UNEXP_EVENT ->                           \* not retried: QP to ERROR
                 /\ ReqOutcome(TRUE, una, inflight, lost, sacked, nackEV)
                 /\ UNCHANGED <<posted, nxt, txEV, lossScan, retries, sndOK, evVars, ghostRetries>>
            [] r = NACK_TRIMMED /\ "IgnoreTrim" \in Bugs ->     \* FaultIgnoreTrim: nothing happens
                 UNCHANGED <<reqVars, evVars, nackEV, ghostRetries>>
            [] p < una \/ p >= nxt \/ p \in sacked ->            \* IgnoreStaleAck (LR-NACK-6)
                 UNCHANGED <<reqVars, evVars, nackEV, ghostRetries>>
            [] OTHER ->
                 \* in flight: markLost(psn, LossNACK, ev); already queued: the retransmission
                 \* now avoids this NACK's EV.  Either way one retry event (LR-NACK-5).
                 LET skip == r = NACK_TRIMMED \/ (r = NACK_TRIMMED_LASTHOP /\ "LastHopSkip" \in Bugs)
                     st1  == IF skip THEN SetEV(evState, e, "SKIP", "Trimmed") ELSE evState
                     g    == IF p \in inflight THEN GBN(p) ELSE {}
                     r1   == Charge(retries, RetryInc)
                     err  == r1 > RetryLimit \/ "FatalRecoverableNACK" \in Bugs
                 IN /\ evState' = st1
                    /\ txEV' = [txEV EXCEPT ![p] = e]
                    /\ retries' = r1
                    /\ ghostRetries' = Charge(ghostRetries, 1)
                    /\ ReqOutcome(err, una, inflight \ ({p} \cup g), lost \cup {p} \cup g,
                                  sacked \ g, [nackEV EXCEPT ![p] = e])
                    /\ UNCHANGED <<posted, nxt, lossScan, sndOK, probeOK, probing>>
    /\ UNCHANGED <<rspVars, failed, netFaults, ctlOps, placeCount, mem, rcvCQ, everSacked>>

\* onAETH: a transport ACK acknowledges cumulatively (RSP-ACK-2); no EV or CC information
ReqRecvACK(pk) ==
    /\ qpState = "RTS"
    /\ pk.t = "A"
    /\ net' = Take(net, pk)
    /\ IF pk.cack > nxt \/ pk.cack <= una
       THEN UNCHANGED <<reqVars, evVars, ghostVars>>
       ELSE LET cum == {p \in PSNs : una <= p /\ p < pk.cack} IN
            /\ una' = pk.cack
            /\ inflight' = inflight \ cum
            /\ lost' = lost \ cum
            /\ sacked' = sacked \ cum
            /\ retx' = retx \ cum
            /\ txEV' = [p \in PSNs |-> IF p \in cum THEN NoEV ELSE txEV[p]]
            /\ nackEV' = [p \in PSNs |-> IF p \in cum THEN NoEV ELSE nackEV[p]]
            /\ retries' = 0
            /\ ghostRetries' = 0
            /\ sndOK' = Compl(sndOK, pk.cack, sacked \ cum)
            /\ UNCHANGED <<qpState, posted, nxt, lossScan, evVars, placeCount, mem, rcvCQ, everSacked>>
    /\ UNCHANGED <<rspVars, failed, netFaults, ctlOps>>

\* probeTimer/sendProbe: a reliability probe on an ASSUMED_BAD EV (EV-PRB-1..3).  A probe
\* still unanswered when the next one is sent resets the run of good answers.  Model
\* abstraction: no new probe on e while a probe on e or its answer is in the network.
ProbeBusy(e) == \E pk \in DOMAIN net : pk.ev = e /\ (pk.t = "P" \/ (pk.t = "S" /\ pk.pr))
NoProbeBusy(e) == FALSE     \* for trace validation (.cfg: ProbeBusy <- NoProbeBusy)

SendProbe(e) ==
    /\ qpState = "RTS"
    /\ evState[e] = "ASSUMED_BAD"
    /\ ~ProbeBusy(e)
    /\ probeOK' = IF e \in probing THEN [probeOK EXCEPT ![e] = 0] ELSE probeOK
    /\ probing' = probing \cup {e}
    /\ net' = SendOn(net, ProbePkt(e))
    /\ UNCHANGED <<reqVars, evState, rspVars, failed, netFaults, ctlOps, ghostVars>>

\* endRotation (inside nextEV): every SKIP EV becomes GOOD (EV-ST-6)
EndRotation ==
    /\ qpState = "RTS"
    /\ \E e \in EVs : evState[e] = "SKIP"
    /\ evState' = [e \in EVs |-> IF evState[e] = "SKIP" THEN "GOOD" ELSE evState[e]]
    /\ UNCHANGED <<reqVars, probeOK, probing, rspVars, envVars, ghostVars>>

\* SetEVState (control.go): MODIFY_EV_STATE sets GOOD, ASSUMED_BAD or DENIED from any state
\* (EV-ST-9, EV-ST-14, AMB-42; finding TLA-F3, resolved by widening the spec table to what Go
\* and the API allow).  The controller's ASSUMED_BAD ignores the ev_min_active floor (SetEV).
Controller(e, to) ==
    /\ ctlOps < CtlBudget
    /\ qpState = "RTS"
    /\ to \in {"GOOD", "ASSUMED_BAD", "DENIED"} /\ evState[e] # to
    /\ LET st1 == SetEV(evState, e, to, "Controller")
           nb  == NewBad(evState, st1)
       IN /\ evState' = st1
          /\ probeOK' = [x \in EVs |-> IF x \in nb THEN 0 ELSE probeOK[x]]
          /\ probing' = probing \ nb
    /\ ctlOps' = ctlOps + 1
    /\ UNCHANGED <<reqVars, rspVars, net, failed, netFaults, ghostVars>>

-----------------------------------------------------------------------------
(* Responder actions (onData, onProbe)                                     *)

\* onData for a trimmed packet: duplicate -> SACK; out of window -> PSN_OOR_WINDOW;
\* else TRIMMED / TRIMMED_LASTHOP (RSP-NACK-1, RSP-DUP-2)
RspRecvTrimmed(pk) ==
    /\ ~rspErr
    /\ pk.t = "D" /\ pk.trim # "no"
    /\ LET net0 == Take(net, pk) IN
       IF RIsDup(pk)
       THEN /\ net' = Put(net0, SACKPkt(epsn, rbits, AnswerEV(pk), Verdict(pk.ev, pk.ce), FALSE))
            /\ ecnRun' = EcnNext(pk.ev, pk.ce)
       ELSE /\ net' = Put(net0, NACKPkt(pk.psn, pk.ev,
                         IF RDist(pk) >= MPR THEN NACK_PSN_OOR_WINDOW
                         ELSE IF pk.trim = "last" THEN NACK_TRIMMED_LASTHOP ELSE NACK_TRIMMED))
            /\ UNCHANGED ecnRun
    /\ UNCHANGED <<reqVars, evVars, rspErr, epsn, rbits, held, early, expRQ>>
    /\ UNCHANGED <<failed, netFaults, ctlOps, ghostVars>>

\* onData for a duplicate: never placed again, re-acknowledged (RSP-DUP-1, RSP-DUP-2)
RspRecvDup(pk) ==
    /\ ~rspErr
    /\ pk.t = "D" /\ pk.trim = "no" /\ RIsDup(pk)
    /\ net' = Put(Take(net, pk), SACKPkt(epsn, rbits, AnswerEV(pk), Verdict(pk.ev, pk.ce), FALSE))
    /\ ecnRun' = EcnNext(pk.ev, pk.ce)
    /\ placeCount' = IF "PlaceDuplicates" \in Bugs
                     THEN [placeCount EXCEPT ![pk.psn] = @ + 1] ELSE placeCount
    /\ mem' = IF "PlaceDuplicates" \in Bugs THEN Place(mem, pk.psn) ELSE mem
    /\ UNCHANGED <<reqVars, evVars, rspErr, epsn, rbits, held, early, expRQ>>
    /\ UNCHANGED <<failed, netFaults, ctlOps, rcvCQ, nackEV, ghostRetries, everSacked>>

\* onData beyond the window: PSN_OOR_WINDOW, not placed (MPR-WIN-4, RSP-NACK-4)
RspRecvOOR(pk) ==
    /\ ~rspErr
    /\ pk.t = "D" /\ pk.trim = "no" /\ RIsOOR(pk)
    /\ net' = Put(Take(net, pk), NACKPkt(pk.psn, pk.ev, NACK_PSN_OOR_WINDOW))
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, netFaults, ctlOps, ghostVars>>

\* onData with responder.res = NoTrackingBitmap: NO_BITMAP, not placed (RSP-NACK-3)
RspRefuse(pk) ==
    /\ ResourceNACKs
    /\ ~rspErr
    /\ pk.t = "D" /\ pk.trim = "no" /\ RIsNew(pk)
    /\ net' = Put(Take(net, pk), NACKPkt(pk.psn, pk.ev, NACK_NO_BITMAP))
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, netFaults, ctlOps, ghostVars>>

\* onData for a new in-window PSN: stashIMM, place, advance epsn, releaseIMM, SACK,
\* transport ACK (RSP-RCV-3/4, WIMM-RSP-1/2/4, RSP-SACK-1/3, RSP-ACK-1)
RspRecvNew(pk) ==
    /\ ~rspErr
    /\ pk.t = "D" /\ pk.trim = "no" /\ RIsNew(pk) /\ pk.psn \in PSNs
    /\ LET p    == pk.psn
           e    == pk.ev
           m    == MsgOf[p]
           net0 == Take(net, pk)
       IN IF RWimmOverflow(p)
          THEN /\ net' = Put(net0, NACKPkt(p, e, NACK_UNEXP_EVENT))   \* WIMMLimitNACKUnexpEvent
               /\ rspErr' = TRUE
               /\ UNCHANGED <<epsn, rbits, held, early, expRQ, ecnRun, placeCount, mem, rcvCQ>>
          ELSE LET immLast == RImmLast(p)
                   rb1     == rbits \cup {p}
                   ep1     == IF p = epsn THEN Advance(epsn, rb1) ELSE epsn
                   rb2     == {q \in rb1 : q >= ep1}
                   earlyNow== immLast /\ "EarlyWIMM" \in Bugs
                   held1   == IF immLast THEN held \cup {m} ELSE held
                   early1  == IF earlyNow THEN early \cup {m} ELSE early
                   cq1     == IF earlyNow THEN Append(rcvCQ, m) ELSE rcvCQ
                   k       == IF p = epsn THEN Release(expRQ, held1, ep1) ELSE expRQ
                   relSeq  == [i \in 1 .. (k - expRQ) |-> ImmSeq[expRQ + i]]
                   relSet  == {relSeq[i] : i \in DOMAIN relSeq}
                   sack    == SACKPkt(ep1, rb2, AnswerEV(pk), Verdict(e, pk.ce), FALSE)
                   net1    == Put(net0, sack)
               IN /\ rbits' = rb2
                  /\ epsn' = ep1
                  /\ held' = held1 \ relSet
                  /\ early' = early1 \ relSet
                  /\ expRQ' = k
                  /\ rcvCQ' = cq1 \o SelectSeq(relSeq, LAMBDA x : x \notin early1)
                  /\ placeCount' = [placeCount EXCEPT ![p] = @ + 1]
                  /\ mem' = Place(mem, p)
                  /\ ecnRun' = EcnNext(e, pk.ce)
                  /\ net' = IF TransportACK /\ MsgsDone(ep1) # MsgsDone(epsn)
                            THEN Put(net1, ACKPkt(ep1)) ELSE net1
                  /\ UNCHANGED rspErr
    /\ UNCHANGED <<reqVars, evVars, failed, netFaults, ctlOps, nackEV, ghostRetries, everSacked>>

\* onData for a forged PSN (outside every WR) that the responder takes for new: only a wrong
\* window check does (RSP-RCV-6).  It marks the PSN received and acknowledges it; the bytes it
\* places (Go: PSN 0's packet under the forged PSN) belong to no WR and are not modelled.
RspRecvForeign(pk) ==
    /\ ~rspErr
    /\ pk.t = "D" /\ pk.trim = "no" /\ RIsNew(pk) /\ pk.psn \notin PSNs
    /\ rbits' = rbits \cup {pk.psn}
    /\ net' = Put(Take(net, pk), SACKPkt(epsn, rbits', AnswerEV(pk), Verdict(pk.ev, pk.ce), FALSE))
    /\ ecnRun' = EcnNext(pk.ev, pk.ce)
    /\ UNCHANGED <<reqVars, evVars, rspErr, epsn, held, early, expRQ, failed, netFaults, ctlOps, ghostVars>>

\* onProbe: SACK with PR, the current cumulative ACK and bitmap (RSP-PRB-1/2)
RspRecvProbe(pk) ==
    /\ ~rspErr
    /\ pk.t = "P"
    /\ net' = Put(Take(net, pk), SACKPkt(epsn, rbits, pk.ev, Verdict(pk.ev, pk.ce), TRUE))
    /\ ecnRun' = EcnNext(pk.ev, pk.ce)
    /\ UNCHANGED <<reqVars, evVars, rspErr, epsn, rbits, held, early, expRQ>>
    /\ UNCHANGED <<failed, netFaults, ctlOps, ghostVars>>

\* Receive on a QP in ERROR: the packet is ignored (EvIgnored, IgnoreQPState)
RspDiscard(pk) ==
    /\ rspErr
    /\ pk.t \in {"D", "P"}
    /\ net' = Take(net, pk)
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, netFaults, ctlOps, ghostVars>>

-----------------------------------------------------------------------------
(* Network                                                                 *)


NetLose(pk) ==
    /\ NetFault("loss")
    /\ net' = Take(net, pk)
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, ctlOps, ghostVars>>

\* The adversarial requester (NetFaultKinds \ni "inject"): the network carries a data packet of
\* any PSN on any EV that the requester did not send (now): in or out of the responder's window,
\* again, in any order, within NetFaultBudget.  It exercises the responder's guards on their
\* own (Go: modelcheck Config.Adversary).  With "forge" it also sends the PSNs of ForgedPSNs.
NetInject(p, e, rtx) ==
    /\ NetFault(IF p \in PSNs THEN "inject" ELSE "forge")
    /\ net' = Put(net, DataPkt(p, e, rtx))
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, ctlOps, ghostVars>>

NetDup(pk) ==
    /\ NetFault("dup")
    /\ net[pk] < MaxCopies
    /\ net' = Put(net, pk)
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, ctlOps, ghostVars>>

\* a switch trims the payload; "last" = trimmed at the last hop (DSCP_TRIMMED_LASTHOP)
NetTrim(pk, where) ==
    /\ NetFault("trim")
    /\ pk.t = "D" /\ pk.trim = "no"
    /\ net' = Put(Take(net, pk), [pk EXCEPT !.trim = where])
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, ctlOps, ghostVars>>

NetMarkCE(pk) ==
    /\ NetFault("ecn")
    /\ pk.t \in {"D", "P"} /\ ~pk.ce
    /\ net' = Put(Take(net, pk), [pk EXCEPT !.ce = TRUE])
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, ctlOps, ghostVars>>

\* a path fails for good: its packets are gone and later sends on it are black-holed
NetFail(e) ==
    /\ e \in FailableEVs \ failed
    /\ failed' = failed \cup {e}
    /\ net' = [pk \in {x \in DOMAIN net : ~(x.t \in {"D", "P"} /\ x.ev = e)} |-> net[pk]]
    /\ UNCHANGED <<reqVars, evVars, rspVars, netFaults, ctlOps, ghostVars>>

\* nothing left to do: stutter, so that TLC's deadlock check only reports real deadlocks
Quiesce == Terminated /\ UNCHANGED vars

-----------------------------------------------------------------------------
\* Receive on the requester QP in ERROR: ignored
ReqDiscard(pk) ==
    /\ qpState = "ERROR"
    /\ pk.t \in {"S", "N", "A"}
    /\ net' = Take(net, pk)
    /\ UNCHANGED <<reqVars, evVars, rspVars, failed, netFaults, ctlOps, ghostVars>>

RspDeliver(pk) == RspRecvNew(pk) \/ RspRecvForeign(pk) \/ RspRecvDup(pk) \/ RspRecvOOR(pk) \/ RspRecvTrimmed(pk)
                  \/ RspRecvProbe(pk) \/ RspDiscard(pk)
ReqDeliver(pk) == ReqRecvSACK(pk) \/ ReqRecvNACK(pk) \/ ReqRecvACK(pk) \/ ReqDiscard(pk)

\* LR-NACK-1, LR-NACK-5: owed is kept by watching the network, not by the action that queues:
\* a recoverable NACK for an outstanding PSN that is not SACKed, consumed by the requester in
\* RTS, owes that PSN a retransmission.  Only a retransmitted data packet of it entering the
\* network, or a failed path (black-holed), discharges it, or its acknowledgement, or ERROR.
\* A NACK the network loses leaves the bag too, but spends the fault budget and owes nothing.
NACKTaken(p) == /\ qpState = "RTS" /\ p \in inflight \cup lost /\ p \notin sacked
                /\ netFaults' = netFaults
                /\ \E pk \in DOMAIN net : /\ pk.t = "N" /\ pk.psn = p /\ pk.reason \in RecoverableNACKs
                                         /\ pk \in DOMAIN net /\ Cnt(net', pk) < net[pk]
ResentNow(p) == /\ p \in lost /\ p \notin lost'
                /\ \E e \in EVs : IF e \in failed THEN p \in inflight' /\ txEV'[p] = e
                                 ELSE Cnt(net', DataPkt(p, e, TRUE)) > Cnt(net, DataPkt(p, e, TRUE))
OwedNext == owed' = {p \in PSNs : /\ p \in owed \/ NACKTaken(p)
                                  /\ ~ResentNow(p)
                                  /\ qpState' = "RTS" /\ p >= una' /\ p \notin sacked'}

Step ==
    \/ Post
    \/ \E e \in EVs : SendNew(e) \/ Retransmit(e) \/ SendProbe(e)
    \/ \E S \in SUBSET inflight : Timeout(S)
    \/ EndRotation
    \/ LostTimeout
    \/ \E e \in EVs, to \in {"GOOD", "ASSUMED_BAD", "DENIED"} : Controller(e, to)
    \/ \E pk \in DOMAIN net :
          \/ RspDeliver(pk) \/ RspRefuse(pk) \/ ReqDeliver(pk)
          \/ NetLose(pk) \/ NetDup(pk) \/ NetMarkCE(pk)
          \/ \E w \in {"mid", "last"} : NetTrim(pk, w)
    \/ \E e \in EVs : NetFail(e)
    \/ \E p \in PSNs \cup ForgedPSNs, e \in EVs, rtx \in BOOLEAN : NetInject(p, e, rtx)
    \/ Quiesce

Next == Step /\ OwedNext

Spec == Init /\ [][Next]_vars

\* Fairness: the requester keeps sending, timing out, probing and rotating; the network
\* keeps delivering (packets of failed paths are gone, so every packet in the bag is on a
\* live path or is a control packet on the reverse path).  Each fair action is taken with
\* OwedNext, which every step of Next carries.
Fairness ==
    /\ WF_vars((Post) /\ OwedNext)
    /\ WF_vars((\E e \in EVs : SendNew(e)) /\ OwedNext)
    /\ WF_vars((\E e \in EVs : Retransmit(e)) /\ OwedNext)
    /\ WF_vars((\E S \in SUBSET inflight : Timeout(S)) /\ OwedNext)
    /\ WF_vars((\E e \in EVs : SendProbe(e)) /\ OwedNext)
    /\ WF_vars((EndRotation) /\ OwedNext)
    /\ WF_vars((LostTimeout) /\ OwedNext)
    /\ WF_vars((\E pk \in DOMAIN net : RspDeliver(pk)) /\ OwedNext)
    /\ WF_vars((\E pk \in DOMAIN net : ReqDeliver(pk)) /\ OwedNext)

FairSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Safety properties.  Requirement IDs are those of spec/*.md.             *)

PktOK(pk) ==
    /\ pk.t \in {"D", "P", "S", "N", "A"}
    /\ pk.trim \in {"no", "mid", "last"} /\ pk.ce \in BOOLEAN /\ pk.rtx \in BOOLEAN /\ pk.pr \in BOOLEAN
    /\ pk.t \in {"D", "P", "S", "N"} => pk.ev \in EVs
    /\ pk.t \in {"D", "N"} => pk.psn \in PSNs \cup ForgedPSNs
    /\ pk.t \in {"S", "A"} => pk.cack \in 0 .. NumPSN /\ pk.bits \subseteq PSNs
    /\ pk.m \in {M_NONE, M_SKIP_ONCE, M_ALWAYS_SKIP}
    /\ pk.t = "N" => pk.reason \in NACKReasons

\* TypeOK: every variable has the shape its Go field has.  In particular the responder's
\* rxRing holds only the window epsn .. epsn+MPR-1 (RSP-RCV-4, MPR-WIN-4), and the
\* requester's txRing flags are mutually exclusive and cover every outstanding PSN.
TypeOK ==
    /\ qpState \in {"RTS", "ERROR"}
    /\ posted \in 0 .. NumMsgs
    /\ nxt \in 0 .. NumPSN /\ una \in 0 .. NumPSN /\ una <= nxt
    /\ inflight \subseteq PSNs /\ sacked \subseteq PSNs /\ lost \subseteq PSNs
    /\ inflight \cap sacked = {} /\ inflight \cap lost = {} /\ sacked \cap lost = {}
    /\ \A p \in inflight \cup sacked \cup lost : una <= p /\ p < nxt
    /\ \A p \in una .. (nxt - 1) : p \in inflight \cup sacked \cup lost
    /\ txEV \in [PSNs -> EVs \cup {NoEV}]
    /\ retx \subseteq PSNs /\ lossScan \in 0 .. NumPSN
    /\ retries \in 0 .. (RetryLimit + 1)
    /\ sndOK \in 0 .. posted
    /\ evState \in [EVs -> EVStates]
    /\ probeOK \in [EVs -> 0 .. ProbeSuccesses]
    /\ probing \subseteq EVs
    /\ rspErr \in BOOLEAN
    /\ epsn \in 0 .. NumPSN
    /\ rbits \subseteq {p \in PSNs : epsn < p /\ p < epsn + MPR}
    /\ held \subseteq ImmMsgs /\ early \subseteq held
    /\ expRQ \in 0 .. NumImm
    /\ ecnRun \in [EVs -> 0 .. AlwaysSkipAfter]
    /\ \A pk \in DOMAIN net : PktOK(pk) /\ net[pk] \in Nat \ {0}
    /\ failed \subseteq FailableEVs
    /\ netFaults \in 0 .. NetFaultBudget /\ ctlOps \in 0 .. CtlBudget
    /\ placeCount \in [PSNs -> Nat]
    /\ mem \in [PSNs -> PSNs \cup {NoData}]
    /\ rcvCQ \in Seq(ImmMsgs)
    /\ nackEV \in [PSNs -> EVs \cup {NoEV}]
    /\ ghostRetries \in Nat
    /\ everSacked \subseteq PSNs
    /\ owed \subseteq PSNs

Placed(p) == placeCount[p] >= 1

\* RSP-DUP-1, RSP-RCV-3: a PSN's payload is written to memory at most once.
NoDuplicatePlacement == \A p \in PSNs : placeCount[p] <= 1

\* RSP-RCV-3, CMP-SND-1, CMP-RCV-1: wherever a completion was reported (a send WR completed
\* successfully, a WriteIMM delivered with everything before it), every slot of the completed
\* messages holds exactly the bytes written to it.
MemoryMatchesWrites ==
    /\ \A p \in PSNs : MsgOf[p] <= sndOK => mem[p] = p
    /\ \A i \in DOMAIN rcvCQ : \A p \in 0 .. LastPSN[rcvCQ[i]] : mem[p] = p

\* RSP-RCV-6, RSP-NACK-4: the responder places only PSNs within its window epsn .. epsn+MPR-1
\* (epsn only grows, so a PSN placed out of window stays beyond it); with a correct requester
\* no PSN beyond the window ever arrives, so only NetInject exercises it.  A forged PSN of no WR
\* is never placed in the model; that it was taken for new shows in rbits (RspRecvForeign).
ResponderWindow == /\ \A p \in PSNs : placeCount[p] > 0 => p < epsn + MPR
                   /\ \A p \in rbits : p < epsn + MPR

\* CMP-SND-1 (send WR completes only when all its PSNs are cumulatively acknowledged, hence
\* placed), WIMM-RSP-1, CMP-RCV-1 (a WriteIMM receive completion only after its bytes are placed).
CompletionOnlyAfterPlacement ==
    /\ \A m \in 1 .. sndOK : \A p \in PSNsOf(m) : Placed(p)
    /\ \A i \in DOMAIN rcvCQ : \A p \in PSNsOf(rcvCQ[i]) : Placed(p)

\* WIMM-RSP-1, WIMM-RSP-2, RSP-DUP-1, CMP-RCV-1: WriteIMM completions are delivered exactly
\* once, in send (RQMSN) order, and only after every PSN up to the WriteIMM's last PSN
\* (all earlier messages) is placed.
WriteIMMExactlyOnceInOrder ==
    /\ Len(rcvCQ) <= NumImm
    /\ \A i \in DOMAIN rcvCQ : rcvCQ[i] = ImmSeq[i]
    /\ \A i \in DOMAIN rcvCQ : \A p \in 0 .. LastPSN[rcvCQ[i]] : Placed(p)

\* MPR-WIN-1, REQ-TX-1, REQ-PSN-4: the requester never has sent a PSN beyond una + MPR - 1
\* (spec terms: 1 <= p - cack <= W).
WindowRespected == qpState = "RTS" => nxt - una <= MPR

\* MPR-WIN-1 as the responder sees it: no data packet in flight lies at or beyond epsn + MPR
\* (not a restatement of the send guard: una <= epsn).  NetInject may break it on purpose.
WindowAtReceiver == "inject" \notin NetFaultKinds => \A pk \in DOMAIN net : pk.t = "D" => pk.psn < epsn + MPR

\* LR-RTX-1, LR-SACK-2: no go-back-N: a PSN that was acknowledged (cumulatively or
\* selectively) is never queued for retransmission.
SelectiveRetransmitOnly == \A p \in lost : p >= una /\ p \notin everSacked

\* LR-NACK-1/2/3, LR-NACK-5: a recoverable NACK for an outstanding PSN queues that PSN for
\* retransmission, and it stays queued, in every later state, until a retransmission of it
\* is really sent (owed, kept by OwedNext from the network, not by the queueing action).
NACKedPSNQueued == \A p \in owed : p \in lost

\* LR-TMR-6, LR-TMR-7, LR-NACK-5: the retry counter counts every timeout expiry and
\* recoverable NACK since una last advanced, never exceeds the limit while the QP is in
\* RTS, and the QP is in ERROR once the budget is exhausted.
RetryBudget ==
    /\ qpState = "RTS" => /\ retries = ghostRetries
                          /\ retries <= RetryLimit
    /\ ghostRetries > RetryLimit => qpState = "ERROR"

\* QP-ST-10, LR-TMR-7, LR-NACK-4: the QP enters ERROR only for a cause the step gives it:
\* retry events (counted by the ghost) beyond the budget, or a NACK UNEXP_EVENT consumed.
FatalNACKTaken == \E pk \in DOMAIN net : /\ pk.t = "N" /\ pk.reason = NACK_UNEXP_EVENT
                                        /\ (pk \notin DOMAIN net' \/ net'[pk] < net[pk])
ErrorJustified ==
    [][qpState = "RTS" /\ qpState' = "ERROR" => ghostRetries' > RetryLimit \/ FatalNACKTaken]_vars

\* LR-SACK-1, LR-SACK-2, RSP-SACK-1: what the requester believes acknowledged has really
\* been received by the responder.
AckSound ==
    qpState = "RTS" =>
        /\ una <= epsn
        /\ \A p \in sacked : p < epsn \/ p \in rbits

\* EV-ST-1, EV-SET-4: only GOOD EVs carry first transmissions (checked on the packet the
\* step adds).  Retransmissions are checked by NACKedEVNotReused.
\* First transmissions and retransmissions (a PSN leaving lost for inflight) alike.
SentOnGoodEV ==
    [][\A e \in EVs : (\/ nxt' = nxt + 1 /\ txEV'[nxt] = e
                       \/ \E p \in lost : p \notin lost' /\ p \in inflight' /\ txEV'[p] = e)
                      => evState[e] = "GOOD"]_vars

-----------------------------------------------------------------------------
(* Action properties                                                       *)

Consumed(pk) == pk \in DOMAIN net /\ Cnt(net', pk) < net[pk]
CtrlConsumed == \E pk \in DOMAIN net : pk.t \in {"S", "N", "A"} /\ Consumed(pk)
SACKFor(e, m, pr) == \E pk \in DOMAIN net :
                        pk.t = "S" /\ pk.ev = e /\ pk.m = m /\ pk.pr = pr /\ Consumed(pk)
NACKFor(e, r) == \E pk \in DOMAIN net : pk.t = "N" /\ pk.ev = e /\ pk.reason = r /\ Consumed(pk)
\* a timeout step (rtoTimer) consumes no control packet and moves expired PSNs from
\* inflight to lost (or flushes everything when the QP fails); since LR-TMR-6 counts only
\* the oldest outstanding PSN's timeout, a timeout step need not charge a retry
TimeoutOn(e) == /\ ~CtrlConsumed
                /\ \E p \in inflight : /\ p \notin inflight' /\ txEV[p] = e
                                       /\ (p \in lost' \/ qpState' = "ERROR")
\* a SACK step whose reorder rule queued a first transmission sent on e (EV-SM-5)
InferredLossOn(e) == /\ \E pk \in DOMAIN net : pk.t = "S" /\ Consumed(pk)
                     /\ \E p \in inflight : /\ p \notin inflight' /\ p \in lost'
                                            /\ p \notin retx /\ txEV[p] = e
ControllerStep == ctlOps' = ctlOps + 1
RotationStep == UNCHANGED <<net, inflight, lost, nxt, ctlOps>>

\* The transition table of spec/21-paths.md (EV-ST-2..EV-ST-10; EV-ST-9 and EV-ST-14 for the
\* controller; EV-SM-5 for losses inferred from SACKs): a step may change an EV's state only as
\* the table allows, for an event on THAT EV.
EVStepAllowed(e) ==
    LET from == evState[e]
        to   == evState'[e]
    IN \/ from = to
       \/ ControllerStep /\ to \in {"GOOD", "ASSUMED_BAD", "DENIED"}
       \/ from = "GOOD" /\ to = "SKIP" /\ (SACKFor(e, M_SKIP_ONCE, FALSE) \/ NACKFor(e, NACK_TRIMMED))
       \/ from \in {"GOOD", "SKIP"} /\ to = "ASSUMED_BAD"
          /\ (SACKFor(e, M_ALWAYS_SKIP, FALSE) \/ TimeoutOn(e) \/ InferredLossOn(e))
       \/ from = "SKIP" /\ to = "GOOD" /\ RotationStep
       \/ from = "ASSUMED_BAD" /\ to = "GOOD" /\ SACKFor(e, M_NONE, TRUE)
       \/ from = "ASSUMED_BAD" /\ to = "SKIP" /\ SACKFor(e, M_SKIP_ONCE, TRUE)

EVTransitionsAllowed == [][\A e \in EVs : EVStepAllowed(e)]_vars

\* EV-ST-13, LR-NACK-1: the retransmission of a PSN named in a NACK does not use the NACK's EV.
Retransmitted(p) == p \in lost /\ p \notin lost' /\ p \in inflight'
NACKedEVNotReused ==
    [][\A p \in PSNs : (Retransmitted(p) /\ nackEV[p] # NoEV) => txEV'[p] # nackEV[p]]_vars

\* RSP-SACK-3, RSP-NACK-1, EV-ST-3: the SACK or NACK answering a data packet, a first
\* transmission or a retransmission, reflects the EV that packet came on: the requester judges
\* that EV by it.  NetInject's resends (rtx) on any EV exercise it for retransmissions.
NewAnswers == {x \in DOMAIN net' : x.t \in {"S", "N"} /\ ~x.pr /\ Cnt(net', x) > Cnt(net, x)}
ResponderReflectsEV ==
    [][\A pk \in DOMAIN net : pk.t = "D" /\ Consumed(pk) => \A x \in NewAnswers : x.ev = pk.ev]_vars

-----------------------------------------------------------------------------
(* Liveness                                                                *)

\* QP-ST-10, LR-TMR-7, CMP-SND-1, WIMM-RSP-1: under Fairness, every posted WR completes
\* (and every WriteIMM is delivered) or the requester QP enters ERROR.
AllDone == posted = NumMsgs /\ sndOK = NumMsgs /\ Len(rcvCQ) = NumImm
Progress == <>(qpState = "ERROR" \/ AllDone)

-----------------------------------------------------------------------------
(* Message layouts for the .cfg files (TLC .cfg files cannot write tuples). *)
Len21   == <<2, 1>>                 Imm21   == <<FALSE, TRUE>>
Len211  == <<2, 1, 1>>              Imm211  == <<FALSE, TRUE, TRUE>>
Len121  == <<1, 2, 1>>              Imm121  == <<FALSE, TRUE, TRUE>>
Len212  == <<2, 1, 2>>              Imm212  == <<FALSE, TRUE, TRUE>>

(* Symmetry for configurations whose EVs are model values, none failable or all alike:   *)
(* nothing in the model orders EVs (SendNew, Retransmit and the probes pick any), so      *)
(* permuting them maps behaviours to behaviours.                                          *)
EVSymmetry == Permutations(EVs)

(* View for the larger models (VIEW DeadVarsView): TLC identifies states that differ only  *)
(* in variables no guard, no other variable's next value and no checked property reads,    *)
(* under these constants.  With ReorderGuard = 0 the reorder rule queues nothing (rl = {}  *)
(* in ReqRecvSACK: lim = ls0), so lossScan and retx are read nowhere else (InferredLossOn   *)
(* needs a SACK step that moves a PSN from inflight to lost, which only rl does); with      *)
(* ProbeSuccesses = 1 a good probe answer restores its EV whatever probeOK holds, and only  *)
(* probeOK is computed from probeOK.  Such states have the same successors up to those     *)
(* variables and the same verdicts, so checking one of them checks all.  Other constants:  *)
(* every variable.                                                                         *)
DeadVarsView ==
    IF ReorderGuard = 0 /\ ProbeSuccesses = 1
    THEN <<qpState, posted, nxt, una, inflight, sacked, lost, txEV, retries, sndOK,
           evState, probing, rspVars, envVars, ghostVars, owed>>
    ELSE vars

(* State constraint for the larger models: bound the bag.                  *)
MaxBag == 8
BagBound == BagSize(net) <= MaxBag
=============================================================================

------------------------------ MODULE MRCTypes ------------------------------
(***************************************************************************)
(* Constants, derived tables, packet records and bag helpers of the MRC    *)
(* model.  The model is one direction of one connection: the requester     *)
(* half of QP A (Go: statemachine.requester + statemachine.evTable) and    *)
(* the responder half of QP B (Go: statemachine.responder), joined by a    *)
(* network that is a bag (multiset) of in-flight packets.                  *)
(*                                                                         *)
(* PSNs are model PSNs 0 .. NumPSN-1 (Go PSN minus the QP's SQ_PSN; no     *)
(* 24-bit wrap is modelled).  EVs are natural numbers (the Go EV values in *)
(* trace validation, small integers in model checking).                    *)
(***************************************************************************)
EXTENDS Naturals, Integers, Sequences, FiniteSets, TLC

CONSTANTS
    EVs,             \* the QP's EVs (Go: evSet.values; the model has no backup pool)
    FailableEVs,     \* EVs whose path may fail; EVs \ FailableEVs keep delivering
    MsgLen,          \* <<n1, n2, ...>>: packets of each posted WR (Go: sendWR.npkts)
    MsgImm,          \* <<b1, b2, ...>>: WR i is RDMA_WRITE_WITH_IMM (Go: sendWR.op)
    MPR,             \* tracking window in PSNs (Go: requester.win, responder.win = 128*MPR)
    RetryLimit,      \* linear_cnt + exp_cnt (Go: requester.linear + requester.exp)
    MaxWIMM,         \* requester max_wimm (Go: requester.maxWIMM)
    MaxWIMMDest,     \* responder max_wimm_dest (Go: len(responder.stash))
    MinActive,       \* ev_min_active (Go: evSet.minActive)
    ProbeSuccesses,  \* probes answered m=NONE that restore an EV (Go: evSet.probeSuccesses)
    AlwaysSkipAfter, \* CE marks in a row on one EV that earn ALWAYS_SKIP; 0 = never (Go: AckPolicy.AlwaysSkipAfter, < 0 = never)
    ReorderGuard,    \* reorder_guard in packets; 0 = no reorder-based loss (Go: Config.ReorderThreshold, default = MPR window)
    TransportACK,    \* responder sends the AETH transport ACK (Go: !AckPolicy.NoTransportACK)
    ResourceNACKs,   \* responder may refuse a new PSN with NO_BITMAP (Go: responder.res)
    NetFaultKinds,   \* subset of {"loss","dup","trim","ecn","delay"} the network may apply;
                     \* "delay" = a packet or its answer outlives its RTO (spurious timeout)
    NetFaultBudget,  \* total number of network fault events in one behaviour
    MaxCopies,       \* the network never holds more than MaxCopies copies of a packet via duplication
    CtlBudget,       \* number of controller MODIFY_EV_STATE operations in one behaviour
    Bugs,            \* seeded bugs, subset of BugNames (Go: Config.Faults, plus model-only ones)
    Variants         \* behaviour variants, subset of {"AvoidFallback", "KeepEVOnInferredLoss",
                     \*   "RetryInfinite", "KeepAvoidAfterStall"}

BugNames == {"GoBackN",        \* Go FaultGoBackN
             "IgnoreTrim",     \* Go FaultIgnoreTrim
             "ReuseNACKedEV",  \* Go FaultReuseNACKedEV
             "EarlyWIMM",      \* Go FaultEarlyWIMM
             "PlaceDuplicates",\* Go FaultPlaceDuplicates
             "BeyondMPR",      \* Go FaultBeyondMPR (model: window 2*MPR)
             "NoRetryCount",   \* model only: retries never charged
             "CompleteOnSACK", \* model only: a WR completes when its last PSN is selectively ACKed
             "LastHopSkip",    \* model only: TRIMMED_LASTHOP NACK moves the EV to SKIP
             "RspNoWindow",    \* model only: responder accepts PSNs beyond its window
             "RspWindowOffByOne", \* Go FaultResponderWindowOffByOne: one PSN beyond the window accepted
             "FatalRecoverableNACK", \* Go FaultFatalRecoverableNACK: a recoverable NACK fails the QP
             "PlaceShifted",   \* Go FaultPlaceShifted: a non-first packet placed one slot lower
             "CackOffByOne",   \* model only: the ends disagree on the cack_psn convention (AMB-26):
                               \*   the requester reads one PSN more as cumulatively acknowledged
             "SendOnSkip",     \* model only: new data may go out on a SKIP EV
             "NoLostTimer",    \* Go FaultNoStallTimer: no timer for a queued PSN no EV may carry
                               \*   (Go before the fix of finding TLA-F1; LR-SM-3)
             "RtxNotSent",     \* model only: a retransmission leaves the queue for inflight but
                               \*   never reaches the network
             "RtxReflectFirstEV"} \* model only: the responder answers a retransmitted data packet
                               \*   on the lowest EV, not on the EV it came on

-----------------------------------------------------------------------------
(* Numeric codes, equal to the Go/wire values so that traces compare.     *)

NoEV == -1

M_NONE == 0          M_SKIP_ONCE == 1      M_ALWAYS_SKIP == 2      \* wire.Multipath

NACK_TRIMMED == 1    NACK_TRIMMED_LASTHOP == 2                      \* wire.NACKReason
NACK_NO_BITMAP == 6  NACK_PSN_OOR_WINDOW == 11  NACK_UNEXP_EVENT == 25

RecoverableNACKs == {NACK_TRIMMED, NACK_TRIMMED_LASTHOP, NACK_NO_BITMAP, NACK_PSN_OOR_WINDOW}
NACKReasons == RecoverableNACKs \cup {NACK_UNEXP_EVENT}

EVStates == {"GOOD", "SKIP", "ASSUMED_BAD", "DENIED"}   \* statemachine.EVState

-----------------------------------------------------------------------------
(* Message / PSN tables (zero-arity, so TLC evaluates them once).          *)

RECURSIVE SumSeq(_)
SumSeq(s) == IF s = <<>> THEN 0 ELSE Head(s) + SumSeq(Tail(s))

NumMsgs == Len(MsgLen)
NumPSN  == SumSeq(MsgLen)
PSNs    == 0 .. (NumPSN - 1)
Msgs    == 1 .. NumMsgs

FirstPSN == [m \in Msgs |-> SumSeq(SubSeq(MsgLen, 1, m - 1))]   \* sendWR.firstPSN
LastPSN  == [m \in Msgs |-> FirstPSN[m] + MsgLen[m] - 1]
MsgOf    == [p \in PSNs |-> CHOOSE m \in Msgs : FirstPSN[m] <= p /\ p <= LastPSN[m]]
PSNsOf(m) == FirstPSN[m] .. LastPSN[m]

ImmMsgs == {m \in Msgs : MsgImm[m]}
ImmSeq  == SelectSeq([i \in Msgs |-> i], LAMBDA i : MsgImm[i])   \* WriteIMMs in RQMSN order
NumImm  == Len(ImmSeq)
RQMSN   == [m \in Msgs |-> Cardinality({k \in ImmMsgs : k < m})] \* sendWR.rqmsn

MinOf(S) == CHOOSE x \in S : \A y \in S : x <= y
MaxOf(S) == CHOOSE x \in S : \A y \in S : x >= y
Min2(a, b) == IF a < b THEN a ELSE b
Max2(a, b) == IF a > b THEN a ELSE b

-----------------------------------------------------------------------------
(* Packets.  One record shape for every packet so that the bag's domain   *)
(* holds comparable values.  t: "D" data, "P" probe (PETH), "S" SACK       *)
(* (SETH), "N" NACK (NETH), "A" transport ACK (AETH).                       *)

Pkt(t, psn, ev, rtx, trim, ce, cack, bits, m, pr, reason) ==
    [t |-> t, psn |-> psn, ev |-> ev, rtx |-> rtx, trim |-> trim, ce |-> ce,
     cack |-> cack, bits |-> bits, m |-> m, pr |-> pr, reason |-> reason]

DataPkt(p, e, rtx)        == Pkt("D", p, e, rtx, "no", FALSE, 0, {}, 0, FALSE, 0)
ProbePkt(e)               == Pkt("P", 0, e, FALSE, "no", FALSE, 0, {}, 0, FALSE, 0)
SACKPkt(c, bits, e, m, pr)== Pkt("S", 0, e, FALSE, "no", FALSE, c, bits, m, pr, 0)
NACKPkt(p, e, r)          == Pkt("N", p, e, FALSE, "no", FALSE, 0, {}, 0, FALSE, r)
ACKPkt(c)                 == Pkt("A", 0, NoEV, FALSE, "no", FALSE, c, {}, 0, FALSE, 0)

-----------------------------------------------------------------------------
(* Bags as functions from packets to positive counts.                      *)

EmptyBag == [x \in {} |-> 0]
Cnt(b, x)  == IF x \in DOMAIN b THEN b[x] ELSE 0
Put(b, x)  == IF x \in DOMAIN b THEN [b EXCEPT ![x] = @ + 1] ELSE b @@ (x :> 1)
Take(b, x) == IF b[x] = 1 THEN [y \in DOMAIN b \ {x} |-> b[y]] ELSE [b EXCEPT ![x] = @ - 1]
BagSize(b) == LET RECURSIVE S(_) S(D) == IF D = {} THEN 0 ELSE LET x == CHOOSE y \in D : TRUE IN b[x] + S(D \ {x})
              IN S(DOMAIN b)
=============================================================================

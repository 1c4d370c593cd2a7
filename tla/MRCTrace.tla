------------------------------ MODULE MRCTrace ------------------------------
(***************************************************************************)
(* Trace validation of the Go state machine against MRC.tla, in the style *)
(* of the CCF and etcd-raft trace specs (Cirstea, Kuppe, Loillier, Merz). *)
(*                                                                         *)
(* The trace is an NDJSON file in the schema of statemachine/trace.go     *)
(* (version 1): one object per line with members t, qp, kind, psn, ev,    *)
(* msn, plane, from, to, reason, flags, value.  It is read with TLC's     *)
(* bundled Json module (ndJsonDeserialize).                                *)
(*                                                                         *)
(* The log is filtered to the events this model explains: the requester  *)
(* events of QP ReqQPN, the responder events of QP RspQPN and, when       *)
(* HarnessLog is TRUE, the harness records of modelcheck / tla/tracegen   *)
(* ("Post", "Deliver", "NetDrop", "NetDup", "NetTrim", "NetTrimLastHop",  *)
(* "NetCE", "NetFail", "Controller") about packets of the modelled        *)
(* direction.  A cursor l walks the filtered log; every model step must   *)
(* produce exactly the next few log records.  With HarnessLog = FALSE the *)
(* network and Post steps are silent (unlogged) and TLC guesses them.     *)
(*                                                                         *)
(* The trace is accepted iff TLC finds a state with TraceComplete (the   *)
(* .cfg declares _POSSIBLE TraceComplete) and reports no other error.     *)
(***************************************************************************)
EXTENDS MRC, Json

CONSTANTS
    TraceFile,    \* path of the NDJSON trace
    ReqQPN,       \* QPN of the requester QP (modelcheck and tracegen: 0x11 = 17)
    RspQPN,       \* QPN of the responder QP (0x22 = 34)
    HarnessLog    \* TRUE: every network step and post is a harness record of the trace

VARIABLE l        \* cursor: the next record of Log to match

PSNMod == 16777216

Raw == ndJsonDeserialize(TraceFile)

ReqKinds == {"PacketSent", "SACKReceived", "NACKReceived", "Timeout", "Lost", "Retry", "EVState",
             "ProbeSent", "ProbeResult", "Completed", "QPError", "StallTimeout"}
RspKinds == {"Placed", "Duplicate", "SACKSent", "NACKSent", "ACKSent", "IMMDelivered", "QPError"}
PktKinds == {"Deliver", "NetDrop", "NetDup", "NetTrim", "NetTrimLastHop", "NetCE"}

OpWriteFirst == 198   OpWriteMiddle == 199  OpWriteLast == 200  OpWriteLastImm == 201
OpWriteOnly == 202    OpWriteOnlyImm == 203 OpACK == 209  OpSACK == 220  OpNACK == 221  OpProbe == 222

\* a packet of the modelled direction: data and probes from the requester, control from the responder
InDirection(r) == \/ r.qp = ReqQPN /\ r.reason \in (OpWriteFirst .. OpWriteOnlyImm) \cup {OpProbe}
                  \/ r.qp = RspQPN /\ r.reason \in {OpSACK, OpNACK, OpACK}

Kept(r) ==
    \/ r.qp = ReqQPN /\ r.kind \in ReqKinds
    \/ r.qp = RspQPN /\ r.kind \in RspKinds
    \/ HarnessLog /\ r.kind \in PktKinds /\ InDirection(r)
    \/ HarnessLog /\ r.kind \in {"Post", "NetFail", "Controller"} /\ r.qp = ReqQPN

Log == SelectSeq(Raw, Kept)

-----------------------------------------------------------------------------
(* Parameters derived from the trace (substituted for MRC's constants in  *)
(* the .cfg: MsgLen <- TrMsgLen, MsgImm <- TrMsgImm).                     *)

LogSet   == {Log[i] : i \in DOMAIN Log}
SentRecs == {r \in LogSet : r.kind = "PacketSent"}
PostRecs == {r \in LogSet : r.kind = "Post"}
TrSQPSN  == IF SentRecs = {} THEN 0 ELSE MinOf({r.psn : r \in SentRecs})
MsnSet   == {r.msn : r \in SentRecs \cup PostRecs}
TrNumMsgs == IF MsnSet = {} THEN 0 ELSE MaxOf(MsnSet) + 1
SentOf(k) == {r \in SentRecs : r.msn = k}
TrMsgLen == [i \in 1 .. TrNumMsgs |->
               LET S == {r.psn : r \in SentOf(i - 1)} IN
               IF S = {} THEN 1 ELSE MaxOf(S) - MinOf(S) + 1]
TrMsgImm == [i \in 1 .. TrNumMsgs |->
               \/ \E r \in SentOf(i - 1) : r.reason \in {OpWriteLastImm, OpWriteOnlyImm}
               \/ \E r \in PostRecs : r.msn = i - 1 /\ r.reason = 1]
WRID(m)  == IF \E r \in PostRecs : r.msn = m - 1
            THEN (CHOOSE r \in PostRecs : r.msn = m - 1).value ELSE m

-----------------------------------------------------------------------------
(* Model values -> trace values                                            *)

G(p)   == (p + TrSQPSN) % PSNMod                  \* model PSN -> wire PSN
GC(ep) == (ep + TrSQPSN + PSNMod - 1) % PSNMod    \* model epsn -> wire cack_psn (inclusive, AMB-26)

StCode(s) == CASE s = "GOOD" -> 1 [] s = "SKIP" -> 2 [] s = "ASSUMED_BAD" -> 3 [] s = "DENIED" -> 4
CodeSt(c) == CASE c = 1 -> "GOOD" [] c = 2 -> "SKIP" [] c = 3 -> "ASSUMED_BAD" [] c = 4 -> "DENIED"
\* EVCause codes (events.go)
C_SKIPONCE == 1  C_TRIMMED == 2  C_ALWAYSSKIP == 3  C_TIMEOUT == 4  C_ROTATION == 5
C_PROBEOK == 6   C_PROBESKIP == 7  C_CONTROLLER == 8  C_INFERRED == 9

OpcodeOf(p) ==
    LET m == MsgOf[p] IN
    IF MsgLen[m] = 1 THEN (IF MsgImm[m] THEN OpWriteOnlyImm ELSE OpWriteOnly)
    ELSE IF p = FirstPSN[m] THEN OpWriteFirst
    ELSE IF p = LastPSN[m] THEN (IF MsgImm[m] THEN OpWriteLastImm ELSE OpWriteLast)
    ELSE OpWriteMiddle

RQ(k, f) == [kind |-> k, qp |-> ReqQPN] @@ f
RS(k, f) == [kind |-> k, qp |-> RspQPN] @@ f

\* the harness description of a packet (modelcheck recordPkt): sender, psn, ev, opcode, flags
PktRec(k, pk) ==
    [kind |-> k] @@
    CASE pk.t = "D" -> [qp |-> ReqQPN, psn |-> G(pk.psn), ev |-> pk.ev, reason |-> OpcodeOf(pk.psn),
                        flags |-> (IF pk.rtx THEN 1 ELSE 0) + (IF pk.trim # "no" THEN 2 ELSE 0)
                                  + (IF pk.ce THEN 4 ELSE 0)]
      [] pk.t = "P" -> [qp |-> ReqQPN, ev |-> pk.ev, reason |-> OpProbe, flags |-> IF pk.ce THEN 4 ELSE 0]
      [] pk.t = "S" -> [qp |-> RspQPN, psn |-> GC(pk.cack), ev |-> pk.ev, reason |-> OpSACK]
      [] pk.t = "N" -> [qp |-> RspQPN, psn |-> G(pk.psn), ev |-> pk.ev, reason |-> OpNACK]
      [] pk.t = "A" -> [qp |-> RspQPN, psn |-> GC(pk.cack), reason |-> OpACK]

-----------------------------------------------------------------------------
(* Matching                                                                *)

Sub(r, x) == \A f \in DOMAIN x : f \in DOMAIN r /\ r[f] = x[f]

\* the step produces exactly the records E, next in the log
MatchAt(E) ==
    /\ l + Len(E) - 1 <= Len(Log)
    /\ \A i \in 1 .. Len(E) : Sub(Log[l + i - 1], E[i])
    /\ l' = l + Len(E)

Cur == Log[l]

Deliver(pk) == IF HarnessLog THEN <<PktRec("Deliver", pk)>> ELSE <<>>

EVChange(e, cause) ==
    IF evState'[e] # evState[e]
    THEN <<RQ("EVState", [ev |-> e, from |-> StCode(evState[e]), to |-> StCode(evState'[e]), reason |-> cause])>>
    ELSE <<>>

Completions(a, b) == [i \in 1 .. (b - a) |-> RQ("Completed", [value |-> WRID(a + i), reason |-> 0])]

\* enterError: QPError, then the WR at the head completes with status st, the others with a flush error
ErrSeq(cause, st) ==
    <<RQ("QPError", [reason |-> cause, value |-> st])>>
    \o [i \in 1 .. (posted - sndOK) |->
           RQ("Completed", [value |-> WRID(sndOK + i), reason |-> IF i = 1 THEN st ELSE 1])]

ErrIf(cause, st) == IF qpState' = "ERROR" /\ qpState = "RTS" THEN ErrSeq(cause, st) ELSE <<>>

-----------------------------------------------------------------------------
(* Expected records of each model step                                     *)

SentRec(p, e, rtx) == RQ("PacketSent", [psn |-> G(p), ev |-> e, flags |-> IF rtx THEN 1 ELSE 0,
                                         msn |-> MsgOf[p] - 1, reason |-> OpcodeOf(p)])

\* goBackN (FaultGoBackN): the Lost records of the PSNs it queues after p
GBNRecs(p) == LET Q == GBN(p) IN
              [i \in 1 .. Cardinality(Q) |->
                  LET q == CHOOSE x \in Q : Cardinality({y \in Q : y < x}) = i - 1
                  IN RQ("Lost", [psn |-> G(q), ev |-> txEV[q], reason |-> 4])]

\* rtoTimer: per expired PSN Timeout, Lost, (go-back-N Lost*), EVState?, Retry? ... (QPError, Completed*)
\* A timeout charges a retry only for the oldest outstanding PSN on an EV not already
\* ASSUMED_BAD (LR-TMR-6), as FoldTimeout in MRC.tla.
RECURSIVE TimeoutRecs(_, _, _, _)
TimeoutRecs(st, r, S, first) ==
    IF S = {} THEN <<>>
    ELSE LET p       == MinOf(S)
             e       == txEV[p]
             counted == st[e] # "ASSUMED_BAD" /\ p = una
             st1     == SetEV(st, e, "ASSUMED_BAD", "Timeout")
             r1      == IF counted THEN r + RetryInc ELSE r
         IN <<RQ("Timeout", [psn |-> G(p), ev |-> e]), RQ("Lost", [psn |-> G(p), ev |-> e, reason |-> 2])>>
            \o (IF first THEN GBNRecs(p) ELSE <<>>)
            \o (IF st1[e] # st[e]
                THEN <<RQ("EVState", [ev |-> e, from |-> StCode(st[e]), to |-> StCode(st1[e]), reason |-> C_TIMEOUT])>>
                ELSE <<>>)
            \o (IF counted THEN <<RQ("Retry", [value |-> r1])>> ELSE <<>>)
            \o (IF counted /\ r1 > RetryLimit THEN ErrSeq(2, 2) ELSE TimeoutRecs(st1, r1, S \ {p}, FALSE))

\* reorderLoss, lowest PSN first: Lost, then EVState if the inferred loss retired the EV the PSN
\* was sent on (EV-SM-5; FoldInferred in MRC.tla)
RECURSIVE InferredRecs(_, _)
InferredRecs(st, R) ==
    IF R = {} THEN <<>>
    ELSE LET q   == MinOf(R)
             x   == txEV[q]
             st1 == SetEV(st, x, "ASSUMED_BAD", "InferredLoss")
         IN <<RQ("Lost", [psn |-> G(q), ev |-> x, reason |-> 3])>>
            \o (IF st1[x] # st[x]
                THEN <<RQ("EVState", [ev |-> x, from |-> StCode(st[x]), to |-> StCode(st1[x]),
                                     reason |-> C_INFERRED])>>
                ELSE <<>>)
            \o InferredRecs(st1, R \ {q})

SACKRecs(pk) ==
    LET R   == lost' \ lost                     \* queued by the reorder rule in this step
        st0 == FoldInferred(evState, R)
        pr0 == probing \ NewBad(evState, st0)
        e   == pk.ev
    IN
    Deliver(pk)
    \o <<RQ("SACKReceived", [psn |-> GC(pk.cack), ev |-> pk.ev, reason |-> pk.m,
                             flags |-> IF pk.pr THEN 2 ELSE 0])>>
    \o IF pk.cack > nxt THEN <<>>
       ELSE Completions(sndOK, sndOK')
            \o InferredRecs(evState, R)
            \o (IF pk.pr /\ e \in pr0
                THEN <<RQ("ProbeResult", [ev |-> e, reason |-> pk.m])>> ELSE <<>>)
            \o (IF evState'[e] # st0[e]
                THEN <<RQ("EVState", [ev |-> e, from |-> StCode(st0[e]), to |-> StCode(evState'[e]),
                                     reason |-> IF pk.pr THEN (IF pk.m = M_NONE THEN C_PROBEOK ELSE C_PROBESKIP)
                                                ELSE IF pk.m = M_SKIP_ONCE THEN C_SKIPONCE ELSE C_ALWAYSSKIP])>>
                ELSE <<>>)

NACKRecs(pk) ==
    LET p == pk.psn  e == pk.ev  r == pk.reason IN
    Deliver(pk)
    \o <<RQ("NACKReceived", [psn |-> G(p), ev |-> e, reason |-> r])>>
    \o CASE r = NACK_UNEXP_EVENT -> ErrIf(3, 3)
         [] r = NACK_TRIMMED /\ "IgnoreTrim" \in Bugs -> <<>>
         [] p < una \/ p >= nxt \/ p \in sacked -> <<>>
         [] OTHER -> EVChange(e, C_TRIMMED)
                     \o (IF p \in inflight THEN <<RQ("Lost", [psn |-> G(p), ev |-> e, reason |-> 1])>> \o GBNRecs(p)
                         ELSE <<>>)
                     \o <<RQ("Retry", [value |-> retries'])>>
                     \o ErrIf(2, 2)

ACKRecs(pk) == Deliver(pk) \o (IF qpState = "RTS" THEN Completions(sndOK, sndOK') ELSE <<>>)

SACKSentRec(e, m, pr) == RS("SACKSent", [psn |-> GC(epsn'), ev |-> e, reason |-> m, flags |-> IF pr THEN 2 ELSE 0])
NACKSentRec(p, e, r)  == RS("NACKSent", [psn |-> G(p), ev |-> e, reason |-> r])
IMMRec(m) == RS("IMMDelivered", [psn |-> G(LastPSN[m]), value |-> RQMSN[m]])

RspNewRecs(pk) ==
    LET p == pk.psn IN
    Deliver(pk)
    \o IF RWimmOverflow(p)
       THEN <<NACKSentRec(p, pk.ev, NACK_UNEXP_EVENT), RS("QPError", [reason |-> 7, value |-> 1])>>
       ELSE LET n0 == IF RImmLast(p) /\ "EarlyWIMM" \in Bugs THEN 1 ELSE 0   \* stashIMM delivers first
            IN (IF n0 = 1 THEN <<IMMRec(MsgOf[p])>> ELSE <<>>)
               \o <<RS("Placed", [psn |-> G(p), msn |-> MsgOf[p] - 1])>>
               \o [i \in 1 .. (Len(rcvCQ') - Len(rcvCQ) - n0) |-> IMMRec(rcvCQ'[Len(rcvCQ) + n0 + i])]
               \o <<SACKSentRec(pk.ev, Verdict(pk.ev, pk.ce), FALSE)>>
               \o (IF TransportACK /\ MsgsDone(epsn') # MsgsDone(epsn)
                   THEN <<RS("ACKSent", [psn |-> GC(epsn')])>> ELSE <<>>)

RspDupRecs(pk) ==
    Deliver(pk)
    \o <<RS("Duplicate", [psn |-> G(pk.psn), ev |-> pk.ev])>>
    \o (IF "PlaceDuplicates" \in Bugs THEN <<RS("Placed", [psn |-> G(pk.psn)])>> ELSE <<>>)
    \o <<SACKSentRec(pk.ev, Verdict(pk.ev, pk.ce), FALSE)>>

RspTrimRecs(pk) ==
    Deliver(pk)
    \o IF RIsDup(pk) THEN <<SACKSentRec(pk.ev, Verdict(pk.ev, pk.ce), FALSE)>>
       ELSE <<NACKSentRec(pk.psn, pk.ev, IF RDist(pk) >= MPR THEN NACK_PSN_OOR_WINDOW
                                         ELSE IF pk.trim = "last" THEN NACK_TRIMMED_LASTHOP
                                         ELSE NACK_TRIMMED)>>

RotationRecs ==
    LET S == {e \in EVs : evState[e] = "SKIP"} IN
    [i \in 1 .. Cardinality(S) |->
        LET e == CHOOSE x \in S : Cardinality({y \in S : y < x}) = i - 1 IN
        RQ("EVState", [ev |-> e, from |-> 2, to |-> 1, reason |-> C_ROTATION])]

-----------------------------------------------------------------------------
(* Trace steps                                                             *)

TSendNew == Cur.kind = "PacketSent" /\ Cur.flags = 0 /\ Cur.ev \in EVs
            /\ SendNew(Cur.ev) /\ MatchAt(<<SentRec(nxt, Cur.ev, FALSE)>>)
TRetransmit == Cur.kind = "PacketSent" /\ Cur.flags = 1 /\ Cur.ev \in EVs /\ lost # {}
               /\ Retransmit(Cur.ev) /\ MatchAt(<<SentRec(MinOf(lost), Cur.ev, TRUE)>>)
TTimeout == Cur.kind = "Timeout"
            /\ \E S \in SUBSET inflight : Timeout(S) /\ MatchAt(TimeoutRecs(evState, retries, S, TRUE))
\* stallTimer: StallTimeout (the oldest queued PSN and the EV it avoids, 0 if an earlier
\* expiry freed it, AMB-44), Retry, then the error records if the budget is spent (LR-SM-3)
TStall == Cur.kind = "StallTimeout" /\ LostTimeout
          /\ MatchAt(<<RQ("StallTimeout", [psn |-> G(MinOf(lost)),
                                           ev |-> IF txEV[MinOf(lost)] = NoEV THEN 0 ELSE txEV[MinOf(lost)]]),
                       RQ("Retry", [value |-> retries'])>> \o ErrIf(2, 2))
TProbe == Cur.kind = "ProbeSent" /\ Cur.ev \in EVs
          /\ SendProbe(Cur.ev) /\ MatchAt(<<RQ("ProbeSent", [ev |-> Cur.ev])>>)
TRotation == Cur.kind = "EVState" /\ Cur.reason = C_ROTATION /\ EndRotation /\ MatchAt(RotationRecs)
TController ==
    IF HarnessLog
    THEN Cur.kind = "Controller" /\ Cur.ev \in EVs /\ Cur.to \in 1 .. 4
         /\ Controller(Cur.ev, CodeSt(Cur.to))
         /\ MatchAt(<<[kind |-> "Controller", qp |-> ReqQPN, ev |-> Cur.ev, to |-> Cur.to]>> \o EVChange(Cur.ev, C_CONTROLLER))
    ELSE Cur.kind = "EVState" /\ Cur.reason = C_CONTROLLER /\ Cur.ev \in EVs /\ Cur.to \in 1 .. 4
         /\ Controller(Cur.ev, CodeSt(Cur.to)) /\ MatchAt(EVChange(Cur.ev, C_CONTROLLER))

\* a packet is delivered (Deliver record, or the first record its receiver writes)
TDeliver == \E pk \in DOMAIN net :
    \/ ReqRecvSACK(pk) /\ MatchAt(SACKRecs(pk))
    \/ ReqRecvNACK(pk) /\ MatchAt(NACKRecs(pk))
    \/ ReqRecvACK(pk) /\ MatchAt(ACKRecs(pk)) /\ (HarnessLog \/ sndOK' # sndOK)
    \/ RspRecvNew(pk) /\ MatchAt(RspNewRecs(pk))
    \/ RspRecvDup(pk) /\ MatchAt(RspDupRecs(pk))
    \/ RspRecvOOR(pk) /\ MatchAt(Deliver(pk) \o <<NACKSentRec(pk.psn, pk.ev, NACK_PSN_OOR_WINDOW)>>)
    \/ RspRefuse(pk) /\ MatchAt(Deliver(pk) \o <<NACKSentRec(pk.psn, pk.ev, NACK_NO_BITMAP)>>)
    \/ RspRecvTrimmed(pk) /\ MatchAt(RspTrimRecs(pk))
    \/ RspRecvProbe(pk) /\ MatchAt(Deliver(pk) \o <<SACKSentRec(pk.ev, Verdict(pk.ev, pk.ce), TRUE)>>)
    \/ HarnessLog /\ (RspDiscard(pk) \/ ReqDiscard(pk)) /\ MatchAt(Deliver(pk))

\* harness records of network steps and posts
TNet ==
    \/ Cur.kind = "Post" /\ Cur.msn = posted /\ Post /\ MatchAt(<<Cur>>)
    \/ Cur.kind = "NetFail" /\ Cur.ev \in EVs /\ NetFail(Cur.ev) /\ MatchAt(<<Cur>>)
    \/ \E pk \in DOMAIN net :
          \/ Cur.kind = "NetDrop" /\ NetLose(pk) /\ MatchAt(<<PktRec("NetDrop", pk)>>)
          \/ Cur.kind = "NetDup" /\ NetDup(pk) /\ MatchAt(<<PktRec("NetDup", pk)>>)
          \/ Cur.kind = "NetCE" /\ NetMarkCE(pk) /\ MatchAt(<<PktRec("NetCE", [pk EXCEPT !.ce = TRUE])>>)
          \/ Cur.kind = "NetTrim" /\ NetTrim(pk, "mid") /\ MatchAt(<<PktRec("NetTrim", [pk EXCEPT !.trim = "mid"])>>)
          \/ Cur.kind = "NetTrimLastHop" /\ NetTrim(pk, "last")
             /\ MatchAt(<<PktRec("NetTrimLastHop", [pk EXCEPT !.trim = "last"])>>)

\* without harness records, the network and the application act silently
TSilent ==
    /\ ~HarnessLog
    /\ UNCHANGED l
    /\ \/ Post
       \/ \E e \in EVs : NetFail(e)
       \/ \E pk \in DOMAIN net :
             \/ NetLose(pk) \/ NetDup(pk) \/ NetMarkCE(pk) \/ NetTrim(pk, "mid") \/ NetTrim(pk, "last")
             \/ RspDiscard(pk) \/ ReqDiscard(pk)
             \/ ReqRecvACK(pk) /\ sndOK' = sndOK

TraceInit == Init /\ l = 1

TraceNext ==
    /\ \/ /\ l <= Len(Log)
          /\ \/ TSendNew \/ TRetransmit \/ TTimeout \/ TStall \/ TProbe \/ TRotation \/ TController
             \/ TDeliver \/ (HarnessLog /\ TNet)
       \/ TSilent
    /\ OwedNext

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, l>>

TraceView == <<vars, l>>

-----------------------------------------------------------------------------
(* Acceptance                                                              *)

\* The trace is accepted iff some behaviour of TraceSpec reaches TraceComplete: the .cfg says
\*     _POSSIBLE TraceComplete
\* (a TLC post-condition, tlaplus/tlaplus HEAD 2026): TLC reports an error when no reachable
\* state satisfies it.  The trace spec may branch (several packets in the bag can match a
\* harness record when only their bitmaps differ), so the etcd-raft formulation
\* [](l <= Len(Log) => [](TLCGet("queue") = 1 \/ l > Len(Log))), which assumes a single
\* state per BFS level, rejects good traces here; it is kept as TraceMatchedDeterministic.
\* With a TLC that lacks _POSSIBLE, check INVARIANT TraceNotComplete instead: a violation of it
\* means the trace was accepted.
TraceComplete    == l = Len(Log) + 1
TraceNotComplete == l <= Len(Log)
TraceMatchedDeterministic == [](l <= Len(Log) => [](TLCGet("queue") = 1 \/ l > Len(Log)))

\* Debugging aid (ALIAS): the cursor and the next record
TraceAlias == [l |-> l, len |-> Len(Log), next |-> IF l <= Len(Log) THEN Log[l] ELSE "END",
               qpState |-> qpState, una |-> una, nxt |-> nxt, epsn |-> epsn, evState |-> evState,
               inflight |-> inflight, lost |-> lost, sacked |-> sacked, net |-> net]
=============================================================================

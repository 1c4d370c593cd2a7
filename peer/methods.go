package peer

import (
	"encoding/json"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

// handler answers one control method at time now.
type handler func(a *Agent, now statemachine.Time, params json.RawMessage) (any, error)

// timed is the handler of a method whose parameters decode into P and
// which needs the time: decoding, and refusing what does not decode
// (bad_request), is done here for every method.
func timed[P any](h func(*Agent, statemachine.Time, *P) (any, error)) handler {
	return func(a *Agent, now statemachine.Time, params json.RawMessage) (any, error) {
		var p P
		if err := control.Decode(params, &p); err != nil {
			return nil, err
		}
		return h(a, now, &p)
	}
}

// decoded is timed for a method that does not need the time.
func decoded[P any](h func(*Agent, *P) (any, error)) handler {
	return timed(func(a *Agent, _ statemachine.Time, p *P) (any, error) { return h(a, p) })
}

// bare is the handler of a method without parameters.
func bare(h func(*Agent) (any, error)) handler {
	return func(a *Agent, _ statemachine.Time, _ json.RawMessage) (any, error) { return h(a) }
}

// methods answers every control method (control.Methods); a method is
// one entry, its parameters' type the one its handler takes.
var methods = map[string]handler{
	control.MethodHello:                decoded((*Agent).hello),
	control.MethodReset:                bare(func(a *Agent) (any, error) { return control.Empty{}, a.reset() }),
	control.MethodSetEVProfile:         decoded((*Agent).setEVProfile),
	control.MethodSetCCProfile:         decoded((*Agent).setCCProfile),
	control.MethodRegMR:                decoded((*Agent).regMR),
	control.MethodWriteMR:              decoded((*Agent).writeMR),
	control.MethodReadMR:               decoded((*Agent).readMR),
	control.MethodCreateQP:             decoded((*Agent).createQP),
	control.MethodModifyQP:             timed((*Agent).modifyQP),
	control.MethodQueryQP:              decoded((*Agent).queryQP),
	control.MethodPostSend:             timed((*Agent).postSend),
	control.MethodPostRecv:             timed((*Agent).postRecv),
	control.MethodPollCQ:               decoded((*Agent).pollCQ),
	control.MethodQueryCounters:        decoded((*Agent).queryCounters),
	control.MethodSetPortStatus:        timed((*Agent).setPortStatus),
	control.MethodModifyEVState:        timed((*Agent).modifyEVState),
	control.MethodSetResourceCondition: decoded((*Agent).setResource),
	control.MethodEPSend:               timed((*Agent).epSend),
	control.MethodEPPoll:               bare((*Agent).epPoll),
	control.MethodModifyEVFmtProfile:   decoded((*Agent).modifyEVFmtProfile),
	control.MethodModifyEVProfile:      timed((*Agent).modifyEVProfileCtl),
	control.MethodQueryEVProfile:       decoded((*Agent).queryEVProfileCtl),
	control.MethodModifyCCProfile:      decoded((*Agent).modifyCCProfileCtl),
	control.MethodQueryDeviceCtl:       bare((*Agent).queryDeviceCtl),
	control.MethodModifyPort:           timed((*Agent).portAdmin),
	control.MethodQueryPort:            timed((*Agent).portAdmin),
	control.MethodReqNotifyCQ:          decoded((*Agent).reqNotify),
	control.MethodGetCQEvents:          decoded((*Agent).cqEvents),
	control.MethodGetAsyncEvents:       bare((*Agent).asyncEvents),
	control.MethodQueryVersion:         bare((*Agent).queryVersion),
	control.MethodEPBatchSend:          timed((*Agent).epBatchSend),
	control.MethodEPBatchResult:        timed((*Agent).epBatchResult),
	control.MethodCreateQPHint:         decoded((*Agent).createQPHint),
	control.MethodQueryQPHint:          decoded((*Agent).queryQPHint),
	control.MethodDestroyQPHint:        decoded((*Agent).destroyQPHint),
	control.MethodCreateContext:        decoded((*Agent).createContext),
	control.MethodDestroyContext:       decoded((*Agent).destroyContext),
	control.MethodQueryDeviceEx:        decoded((*Agent).queryDeviceEx),
	control.MethodCreateCompChannel:    bare((*Agent).createCompChannel),
	control.MethodDestroyCompChannel:   decoded((*Agent).destroyCompChannel),
	control.MethodGetCQEvent:           decoded((*Agent).getCQEvent),
}

// flagsOf is the set of flags a request names, each name one flag of
// table; a name the table lacks is invalid_argument, reported as what.
func flagsOf[F ~uint8](names []string, table map[string]F, what string) (F, error) {
	var f F
	for _, n := range names {
		b, ok := table[n]
		if !ok {
			return 0, control.Errorf(control.CodeInvalidArgument, "%s %q", what, n)
		}
		f |= b
	}
	return f, nil
}

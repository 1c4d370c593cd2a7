package peer

import (
	"context"
	"errors"
	"testing"

	"github.com/openmrc/mrc/control"
	"github.com/openmrc/mrc/statemachine"
)

// TestContexts: create_context selects the current versions for 0 and
// refuses versions outside [last supported, current] (CTL-VER-2);
// query_device_ex exists on a 1.0.1 context and not on a 1.0.0 one
// (CTL-VER-3); contexts are at most MaxContexts and an unknown one is
// not_found; the context-any-version fault accepts anything.
func TestContexts(t *testing.T) {
	ctx := context.Background()
	_, c := newAgent(t)
	var r control.ContextResult
	if err := c.Call(ctx, control.MethodCreateContext, control.CreateContextParams{}, &r); err != nil {
		t.Fatal(err)
	}
	if r.APIVersion != statemachine.MRCVersions.Current || r.VendorVersion != statemachine.MRCVersions.Vendor || r.Context == 0 {
		t.Fatalf("default context %+v", r)
	}
	var d control.DeviceCtl
	if err := c.Call(ctx, control.MethodQueryDeviceEx, control.ContextParams{Context: r.Context}, &d); err != nil || d.PhyPortMask != 0b110 {
		t.Fatalf("query_device_ex on a 1.0.1 context: %+v %v", d, err)
	}
	err := c.Call(ctx, control.MethodCreateContext, control.CreateContextParams{APIVersion: statemachine.APIVersion(1, 0, 2)}, nil)
	if !errors.Is(err, control.ErrInvalidArgument) {
		t.Errorf("a version beyond the current: %v", err)
	}
	var old control.ContextResult
	if err := c.Call(ctx, control.MethodCreateContext, control.CreateContextParams{APIVersion: statemachine.APIVersion(1, 0, 0)}, &old); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, control.MethodQueryDeviceEx, control.ContextParams{Context: old.Context}, nil); !errors.Is(err, control.ErrUnsupported) {
		t.Errorf("query_device_ex on a 1.0.0 context: %v", err)
	}
	if err := c.Call(ctx, control.MethodDestroyContext, control.ContextParams{Context: old.Context}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, control.MethodQueryDeviceEx, control.ContextParams{Context: old.Context}, nil); !errors.Is(err, control.ErrNotFound) {
		t.Errorf("a destroyed context: %v", err)
	}
	for i := 1; i < MaxContexts; i++ {
		if err := c.Call(ctx, control.MethodCreateContext, control.CreateContextParams{}, nil); err != nil {
			t.Fatalf("context %d: %v", i+1, err)
		}
	}
	if err := c.Call(ctx, control.MethodCreateContext, control.CreateContextParams{}, nil); !errors.Is(err, control.ErrResourceExhausted) {
		t.Errorf("context %d: %v", MaxContexts+1, err)
	}
	_, bad := newAgent(t, "context-any-version")
	if err := bad.Call(ctx, control.MethodCreateContext, control.CreateContextParams{APIVersion: statemachine.APIVersion(9, 0, 0)}, nil); err != nil {
		t.Errorf("the context-any-version fault refused 9.0.0: %v", err)
	}
}

// TestCompChannelMethods: create_comp_channel up to MaxCompChannels; a QP
// created on an unknown channel is not_found; a channel a QP's CQ is on
// cannot be destroyed (CTL-CQ-6); an empty channel has no event.
func TestCompChannelMethods(t *testing.T) {
	ctx := context.Background()
	_, c := newAgent(t)
	var ch control.ChannelParams
	if err := c.Call(ctx, control.MethodCreateCompChannel, nil, &ch); err != nil || ch.Channel == 0 {
		t.Fatalf("create_comp_channel: %+v %v", ch, err)
	}
	if err := c.Call(ctx, control.MethodCreateQP, control.CreateQPParams{Channel: ch.Channel + 1}, nil); !errors.Is(err, control.ErrNotFound) {
		t.Errorf("a QP on an unknown channel: %v", err)
	}
	if err := c.Call(ctx, control.MethodCreateQP, control.CreateQPParams{Channel: ch.Channel}, nil); err != nil {
		t.Fatal(err)
	}
	var ev control.CQEventResult
	if err := c.Call(ctx, control.MethodGetCQEvent, ch, &ev); err != nil || ev.Found {
		t.Errorf("get_cq_event on a channel with no event: %+v %v", ev, err)
	}
	if err := c.Call(ctx, control.MethodDestroyCompChannel, ch, nil); !errors.Is(err, control.ErrInvalidState) {
		t.Errorf("destroying a channel a QP's CQ is on: %v", err)
	}
	for i := 1; i < MaxCompChannels; i++ {
		if err := c.Call(ctx, control.MethodCreateCompChannel, nil, nil); err != nil {
			t.Fatalf("channel %d: %v", i+1, err)
		}
	}
	if err := c.Call(ctx, control.MethodCreateCompChannel, nil, nil); !errors.Is(err, control.ErrResourceExhausted) {
		t.Errorf("channel %d: %v", MaxCompChannels+1, err)
	}
	if err := c.Call(ctx, control.MethodReset, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, control.MethodGetCQEvent, ch, nil); !errors.Is(err, control.ErrNotFound) {
		t.Errorf("a channel after reset: %v", err)
	}
}

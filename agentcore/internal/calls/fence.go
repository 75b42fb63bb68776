package calls

import "context"

type fenceKey struct{}

// WithFence returns ctx carrying fence, which a call run under it passes
// before its outputs are committed (FileResponse): a task's engine claims
// the task's end there, so that no output appears for a task another
// replica has ended already. fence's error stops the commit.
func WithFence(ctx context.Context, fence func(context.Context) error) context.Context {
	return context.WithValue(ctx, fenceKey{}, fence)
}

// Fence passes the fence ctx carries, if any: nil when the call's outputs
// may be committed. Behind a fence, a call whose context has ended (a task
// canceled, or whose lease was lost) may not.
func Fence(ctx context.Context) error {
	f, _ := ctx.Value(fenceKey{}).(func(context.Context) error)
	switch {
	case f == nil:
		return nil
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return f(ctx)
}

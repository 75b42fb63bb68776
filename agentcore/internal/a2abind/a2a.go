package a2abind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/fault"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/internal/lib/mcptrace"
	"github.com/agentura/agentura/internal/lib/promreg"
	"github.com/agentura/agentura/transfer"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// a2aHandler returns the handler of /a2a, bodies up to limit: a2a-go's JSON-RPC transport over
// a request handler whose executor runs tools through Invoke.
func (s *Server) a2aHandler(limit int64) http.Handler {
	// Tasks are kept in the file store when it keeps records, where every
	// replica and a restarted process find them; in memory otherwise.
	var store a2asrv.TaskStore = tasks.NewMemory(s.URLTTL, s.OutputTTL, callers.OwnerOf)
	var shared *tasks.Shared
	if rs, ok := fileserve.As[fileserve.RecordStore](s.Store); ok && s.Ledger != nil {
		shared = tasks.NewShared(rs, s.Ledger, callers.OwnerOf)
		store = shared
	}
	ended, err := promreg.Register(s.Registry, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentura_a2a_tasks_total",
		Help: "A2A tasks by the state they ended in (completed, failed, canceled).",
	}, []string{"state"}))
	if err != nil {
		panic(fmt.Sprintf("agentcore: register A2A metrics: %v", err)) // a name clash is a programming error
	}
	h := a2asrv.NewHandler(&a2aExecutor{svc: s, ended: ended, ledger: s.Ledger, shared: shared != nil},
		a2asrv.WithLogger(s.Log.With("transport", "a2a")),
		a2asrv.WithTaskStore(chunklessStore{TaskStore: store, windows: &s.windows}),
		a2asrv.WithCallInterceptor(&a2aInterceptor{tasks: store, ledger: s.Ledger, shared: shared != nil}),
	)
	if shared != nil {
		h = tasks.Follow(h, shared)
	}
	h = fitStreams{h}
	rpc := a2asrv.NewJSONRPCHandler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			httpjson.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+transfer.A2APath+"; send A2A JSON-RPC requests with POST")
			return
		}
		if r.ContentLength > limit {
			httpjson.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request of %d bytes exceeds the limit of %d (AGENT_MAX_UPLOAD_BYTES as base64 plus 1 MiB); send large files as a file part with a \"uri\" (for instance a signed URL from POST /uploads)", r.ContentLength, limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		ctx := context.WithValue(r.Context(), a2aRequestID{}, r.Header.Get("X-Request-Id"))
		if r.Header.Get("traceparent") != "" { // a message's metadata, if it carries one, wins (Execute)
			ctx = mcptrace.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		rpc.ServeHTTP(&httpguard.PartKindHint{ResponseWriter: w}, r.WithContext(ctx))
	})
}

// a2aRequestID is the context key of the HTTP request id, for the call's logs.
type a2aRequestID struct{}

// a2aExecutor runs a message's skill as a tool call and reports the task.
type a2aExecutor struct {
	svc   *Server
	ended *prometheus.CounterVec // tasks by final state
	// shared: tasks are kept in the store other replicas share (not in
	// memory): the task holds a lease of ledger while it runs here, and a
	// cancel made on another replica ends it here too.
	shared bool
	ledger *tasks.Ledger
}

// Execute reports the task submitted and working, runs the tool through
// Invoke (with a status update every A2AStatusInterval while it runs), and
// ends the task completed, with the result as artifacts, or failed, with the
// error's text as the status message.
func (x *a2aExecutor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	// The span continues the caller's trace: the W3C trace context in the
	// message's metadata, else in the HTTP headers (a2aHandler).
	if rc.Message != nil {
		if _, ok := rc.Message.Metadata["traceparent"].(string); ok {
			ctx = mcptrace.Propagator.Extract(ctx, mcptrace.MetaCarrier(rc.Message.Metadata))
		}
	}
	ctx, span := otel.Tracer(mcptrace.Instrumentation).Start(ctx, "a2a execute", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	q, ended := tasks.EndsOn(q, span, x.ledger, callers.OwnerOf(ctx), string(rc.TaskID))
	defer ended(ctx)
	return x.execute(ctx, rc, q)
}

// execute is Execute in the task's span.
func (x *a2aExecutor) execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	s := x.svc
	span := trace.SpanFromContext(ctx)
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	fail := func(err error) error {
		span.SetStatus(codes.Error, mcptrace.Scrub(err.Error()))
		return x.end(ctx, rc, q, a2a.TaskStateFailed, err.Error())
	}
	inline, _ := ctx.Value(a2aInlineKey{}).(map[int]a2a.FilePart)
	req, err := parseA2AMessage(rc.Message, inline)
	if err != nil {
		return fail(err)
	}
	def, ok := s.Runner.Tool(req.skill)
	if !ok {
		return fail(fmt.Errorf("unknown skill %q; this agent's skills are %v (see %s)", req.skill, s.toolNames(), transfer.AgentCardPath))
	}
	span.SetName("a2a execute " + def.Name)
	span.SetAttributes(mcptrace.AttrToolName.String(def.Name), mcptrace.AttrOperationName.String("execute_tool"))
	raw, err := req.arguments(def)
	req = nil // the arguments hold the inline files now
	if err != nil {
		return fail(err)
	}

	working := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, agentText(rc, "running "+def.Name))
	if err := q.Write(ctx, working); err != nil {
		return err
	}
	requestID, _ := ctx.Value(a2aRequestID{}).(string)
	owner := callers.OwnerOf(ctx)
	if x.shared {
		// The lease says this replica runs the task: a task whose replica
		// died is failed on any replica's read.
		ledger := x.ledger
		if err := ledger.Begin(ctx, owner, string(rc.TaskID), 0); err != nil {
			return fail(err)
		}
		defer ledger.Finish(ctx, owner, string(rc.TaskID))
		tctx, done, err := ledger.Track(ctx, owner, string(rc.TaskID))
		if err != nil {
			return fail(err)
		}
		defer done()
		ctx = calls.WithFence(tctx, ledger.Fence(owner, string(rc.TaskID)))
	}
	// Should reporting fail half-way, the tool stops too.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	type outcome struct {
		res *calls.Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	progress := make(chan calls.Progress, 1)
	hooks := &calls.Hooks{Progress: func(p calls.Progress) { calls.Latest(progress, p) }}
	var chunks *chunkStreams // the outputs sent in chunks, when the caller asked (chunks.go)
	if wantsChunks(rc.Message) {
		chunks = &chunkStreams{ctx: ctx, q: q, rc: rc, window: s.windows.open(rc.TaskID)}
		defer s.windows.close(rc.TaskID)
		hooks.Output = func(name string) io.Writer { return chunks.open(name) }
	}
	go func(raw []byte) {
		res, err := s.Runner.Run(calls.WithHooks(ctx, hooks), calls.Request{Tool: def.Name, Owner: owner, RequestID: requestID, Args: raw})
		done <- outcome{res, err}
	}(raw)
	raw = nil // the call holds the arguments (and inline files) now
	tick := time.NewTicker(s.a2aStatusInterval())
	defer tick.Stop()
	var out outcome
wait:
	for {
		select {
		case out = <-done:
			break wait
		case p := <-progress:
			if err := q.Write(ctx, a2aProgressEvent(rc, def.Name, p)); err != nil {
				return err
			}
		case <-ctx.Done():
			out = <-done // the tool stops with its context; what it stored is discarded
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, tasks.ErrCanceled):
				return x.end(context.WithoutCancel(ctx), rc, q, a2a.TaskStateCanceled, "canceled by the caller")
			case errors.Is(cause, tasks.ErrLeaseLost), errors.Is(cause, tasks.ErrShutdown):
				return x.end(context.WithoutCancel(ctx), rc, q, a2a.TaskStateFailed, fmt.Sprintf("%s stopped: %v; send the message again", def.Name, cause))
			}
			return nil // canceled here: Cancel reported the task's end
		case <-tick.C:
			elapsed := time.Since(start).Round(time.Second)
			ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, agentText(rc, fmt.Sprintf("still running %s (%s)", def.Name, elapsed)))
			ev.Metadata = map[string]any{"elapsed_seconds": int(elapsed.Seconds())}
			if err := q.Write(ctx, ev); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return nil // canceled as the tool returned: Cancel reported the task's end
	}
	select { // the last report, sent just before the tool returned
	case p := <-progress:
		if err := q.Write(ctx, a2aProgressEvent(rc, def.Name, p)); err != nil {
			return err
		}
	default:
	}
	if out.err != nil {
		return fail(out.err)
	}
	embedMax := s.EmbedMaxBytes
	if whole, _ := ctx.Value(a2aWholeKey{}).(bool); !whole || chunks != nil {
		// Read as a stream (message/stream, or tasks/resubscribe after a
		// non-blocking send): a2a-go's SSE reader takes lines up to 64 KiB
		// (bufio.Scanner's default), so a bytes part is at most a chunk; a
		// larger file goes by its URL alone.
		embedMax = min(embedMax, transfer.A2AChunkBytes)
	}
	evs, err := s.a2aArtifacts(ctx, out.res, chunks, embedMax)
	if err != nil {
		return fail(err)
	}
	for _, ev := range evs {
		ev.TaskID, ev.ContextID = rc.TaskID, rc.ContextID
		if err := q.Write(ctx, ev); err != nil {
			return err
		}
	}
	return x.end(ctx, rc, q, a2a.TaskStateCompleted, out.res.Summary(def.Name))
}

// Cancel ends the task canceled; a2a-go then cancels the execution's
// context, which the running tool sees.
func (x *a2aExecutor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return x.end(ctx, rc, q, a2a.TaskStateCanceled, "canceled by the caller")
}

// end ends the task in state, text its status message: counted in
// agentura_a2a_tasks_total, the final status update written to q.
func (x *a2aExecutor) end(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, state a2a.TaskState, text string) error {
	x.ended.WithLabelValues(string(state)).Inc()
	ev := a2a.NewStatusUpdateEvent(rc, state, agentText(rc, text))
	ev.Final = true
	return q.Write(ctx, ev)
}

func agentText(rc *a2asrv.RequestContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: text})
}

func (s *Server) a2aStatusInterval() time.Duration {
	if s.A2AStatusInterval > 0 {
		return s.A2AStatusInterval
	}
	return tasks.DefaultA2AStatusInterval
}

func (s *Server) toolNames() []string {
	var names []string
	for _, t := range s.Runner.Tools() {
		names = append(names, t.Name)
	}
	return names
}

// a2aInlineKey is the context key of the file parts with inline bytes taken
// out of an incoming message, by part index.
type a2aInlineKey struct{}

// a2aWholeKey is the context key, true when the task's caller waits for
// the whole answer in one response (a blocking message/send), which may
// embed files up to EmbedMaxBytes; a streamed answer embeds less (execute).
type a2aWholeKey struct{}

// a2aInterceptor guards tasks by owner and keeps inline file bytes out of
// task history.
type a2aInterceptor struct {
	a2asrv.PassthroughCallInterceptor
	tasks  a2asrv.TaskStore
	ledger *tasks.Ledger
	shared bool // tasks kept in the shared store, not in memory
}

// Before takes inline file bytes out of an incoming message into the
// context, where the executor finds them, and leaves a text note in their
// place: the message becomes the task's history, which a2a-go copies on
// every update and keeps, and 50 MiB of base64 has no business there. It also
// refuses to resubscribe a caller to a task of another owner.
func (i *a2aInterceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, error) {
	switch p := req.Payload.(type) {
	case *a2a.MessageSendParams:
		if p == nil || p.Message == nil {
			return ctx, nil
		}
		if i.shared && p.Message.TaskID == "" {
			// A new task's record must fit under the owner's quota (E14):
			// refused here, the caller is told why.
			err := i.ledger.Charge(ctx, callers.OwnerOf(ctx), tasks.KeptMessageBytes, true)
			if _, ours := errors.AsType[*fault.Fault](err); ours {
				return ctx, fmt.Errorf("%w: %w", a2a.ErrInternalError, err)
			}
			if err != nil {
				return ctx, fmt.Errorf("%w: %w", a2a.ErrInvalidRequest, err)
			}
		}
		inline := map[int]a2a.FilePart{}
		for n, part := range p.Message.Parts {
			fp, _ := tasks.PartOf[a2a.FilePart](part)
			fb, _ := fp.File.(a2a.FileBytes)
			if fb.Bytes == "" {
				continue
			}
			inline[n] = fp // with its metadata, which may name its parameter
			p.Message.Parts[n] = a2a.TextPart{
				Text:     fmt.Sprintf("[file %q (%s) sent inline; its bytes are not kept in the task history]", fb.Name, fb.MimeType),
				Metadata: map[string]any{"agentura/inlineFile": fb.Name},
			}
		}
		if len(inline) > 0 {
			ctx = context.WithValue(ctx, a2aInlineKey{}, inline)
		}
		if cc.Method() == "OnSendMessage" && (p.Config == nil || p.Config.Blocking == nil || *p.Config.Blocking) {
			ctx = context.WithValue(ctx, a2aWholeKey{}, true)
		}
	case *a2a.TaskIDParams:
		if p != nil && cc.Method() == "OnResubscribeToTask" {
			if _, err := i.tasks.Get(ctx, p.ID); err != nil {
				return ctx, err
			}
		}
	}
	return ctx, nil
}

package mcpbind

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/internal/lib/httpjson"
	"github.com/agentura/agentura/transfer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What of MCP tasks the go-sdk's HTTP handling cannot carry is done here,
// around it, on /mcp:
//
//   - the "task" parameter of a 2025-11-25 tools/call, which the go-sdk
//     drops when it decodes the call, is read first and handed on in
//     headerTaskParam;
//   - a 2026-07-28 subscriptions/listen asking for taskIds is served here
//     whole (the go-sdk can neither read the filter nor send
//     notifications/tasks): the acknowledgement lists the tasks agreed,
//     notifications/tasks follow each change of them, and the stream ends
//     with its result once they have all ended. A listen asking for list
//     changes as well is agreed for its tasks alone (the acknowledgement
//     says so); the client listens for the rest on a stream of its own;
//   - a 2025-11-25 session's standing GET stream carries
//     notifications/tasks/status of the tasks it made, written between the
//     go-sdk's events.

// taskListenPoll is how often a listen stream reads its tasks again (a task
// running on another replica changes unseen otherwise).
const taskListenPoll = 500 * time.Millisecond

// maxListenTasks bounds the tasks one listen stream follows.
const maxListenTasks = 100

// taskHTTP wraps the go-sdk's /mcp handler with the above.
func (s *Server) taskHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(headerTaskParam)
		modern := sessionlessRevision(r.Header.Get(transfer.HeaderMCPProtocolVersion))
		switch {
		case s.Tasks == nil:
		case r.Method == http.MethodGet && !modern && r.Header.Get(transfer.HeaderMCPSessionID) != "":
			s.sessionStreams.serve(w, r, h)
			return
		case r.Method != http.MethodPost:
		case modern && r.Header.Get(transfer.HeaderMCPMethod) == methodListen:
			body, ok := peekBody(w, r)
			if !ok {
				return
			}
			if l := parseTaskListen(body); l != nil {
				s.serveTaskListen(w, r, l)
				return
			}
		case !modern:
			body, ok := peekBody(w, r)
			if !ok {
				return
			}
			if task := taskParamOf(body); task != "" {
				r.Header.Set(headerTaskParam, task)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// peekBody reads r's body whole and puts it back for the next reader.
// The body was bounded before (mcpGuard); a body that cannot be read is
// answered 400 here.
func peekBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		httpjson.WriteError(w, http.StatusBadRequest, "could not read the request body: "+err.Error())
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// taskParamOf returns the "task" parameter of a tools/call request, as
// JSON, or "" when body is no such request.
func taskParamOf(body []byte) string {
	if !bytes.Contains(body, []byte(`"task"`)) {
		return ""
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Task json.RawMessage `json:"task"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.Method != "tools/call" {
		return ""
	}
	task := bytes.TrimSpace(req.Params.Task)
	if len(task) == 0 || task[0] != '{' || len(task) > 1024 {
		return ""
	}
	var compact bytes.Buffer
	if json.Compact(&compact, task) != nil {
		return ""
	}
	return compact.String()
}

// taskListen is a subscriptions/listen asking for tasks.
type taskListen struct {
	id       json.RawMessage
	taskIDs  []string
	declared bool // the request declares the Tasks extension
	handle   string
}

// parseTaskListen reads a subscriptions/listen body; nil when it asks for
// no tasks (the go-sdk serves it).
func parseTaskListen(body []byte) *taskListen {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta          map[string]any `json:"_meta"`
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.Params.Notifications.TaskIDs == nil || len(req.ID) == 0 {
		return nil
	}
	m := readMeta(&mcp.ServerRequest[*mcp.SubscriptionsListenParams]{Params: &mcp.SubscriptionsListenParams{Meta: req.Params.Meta}})
	return &taskListen{id: req.ID, taskIDs: req.Params.Notifications.TaskIDs, declared: m.tasks, handle: m.ownerHandle}
}

// sseEvent writes one SSE event holding msg and flushes it.
func sseEvent(w http.ResponseWriter, msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("event: message\ndata: " + string(b) + "\n\n")); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// serveTaskListen serves a subscriptions/listen for tasks.
func (s *Server) serveTaskListen(w http.ResponseWriter, r *http.Request, l *taskListen) {
	if !l.declared {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": l.id, "error": missingTasksCapability()})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(b)
		return
	}
	owner, err := s.Callers.Owner(r)
	if err != nil {
		httpjson.WriteError(w, http.StatusUnauthorized, err.Error())
		return
	}
	ctx := r.Context()
	agreed := []string{}
	for _, id := range l.taskIDs {
		if len(agreed) == maxListenTasks {
			break
		}
		if _, err := s.Tasks.Read(ctx, owner, id); err == nil {
			agreed = append(agreed, id)
		}
	}
	subscription := mcp.Meta{mcp.MetaKeySubscriptionID: l.id}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if sseEvent(w, map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"_meta": subscription, "notifications": map[string]any{"taskIds": agreed}}}) != nil {
		return
	}
	sent := map[string]string{} // what was last told of each task
	poll := time.NewTicker(taskListenPoll)
	defer poll.Stop()
	for {
		wake := s.taskListeners.wait()
		open := 0
		for _, id := range agreed {
			if last := sent[id]; last == "ended" {
				continue
			}
			open++
			t, err := s.Tasks.Get(ctx, owner, id)
			if err != nil {
				continue // expired meanwhile: nothing more will be told
			}
			fields, meta, err := s.detailed2026(ctx, t)
			if err != nil {
				continue
			}
			key := fmt.Sprint(t.Status, t.Message, t.Updated.UnixNano(), t.Progress)
			if t.Ended() {
				key = "ended"
			}
			if sent[id] == key {
				continue
			}
			meta = maps.Clone(meta)
			setMeta(&meta, mcp.MetaKeySubscriptionID, l.id)
			fields["_meta"] = meta
			if sseEvent(w, map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": fields}) != nil {
				return
			}
			sent[id] = key
			if t.Ended() {
				open--
			}
		}
		if open == 0 {
			sseEvent(w, map[string]any{"jsonrpc": "2.0", "id": l.id, "result": map[string]any{"resultType": "complete", "_meta": subscription}})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.Draining.Done():
			return
		case <-wake:
		case <-poll.C:
		}
	}
}

// taskWake wakes the listen streams of this replica when a task changes
// here, so that they need not wait for their next poll.
type taskWake struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next change.
func (w *taskWake) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

// changed wakes every listen stream; it is a taskCall's changed hook.
func (w *taskWake) changed(*tasks.Task) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// sessionStreams are the standing GET streams of the 2025-11-25 sessions
// on this replica, by session id, for notifications/tasks/status.
type sessionStreams struct {
	streams sync.Map // session id → *injectingWriter
}

// serve serves a session's GET stream through h, writing task
// notifications into it meanwhile.
func (ss *sessionStreams) serve(w http.ResponseWriter, r *http.Request, h http.Handler) {
	id := r.Header.Get(transfer.HeaderMCPSessionID)
	iw := &injectingWriter{ResponseWriter: w}
	ss.streams.Store(id, iw)
	defer func() {
		ss.streams.CompareAndDelete(id, iw)
		iw.close()
	}()
	h.ServeHTTP(iw, r)
}

// isOpen reports whether session id has a standing stream open here.
func (ss *sessionStreams) isOpen(id string) bool {
	iw := ss.stream(id)
	if iw == nil {
		return false
	}
	iw.mu.Lock()
	defer iw.mu.Unlock()
	return iw.open() && !iw.closed
}

// notify writes msg into the stream of session id, if it has one open.
func (ss *sessionStreams) notify(id string, msg any) bool {
	iw := ss.stream(id)
	return iw != nil && iw.inject(msg)
}

// stream is the standing stream of session id open here, or nil.
func (ss *sessionStreams) stream(id string) *injectingWriter {
	iw, _ := ss.streams.Load(id)
	w, _ := iw.(*injectingWriter)
	return w
}

// injectingWriter is a GET stream the go-sdk writes its events to, one
// Write each, and the agent writes events of its own between them.
type injectingWriter struct {
	http.ResponseWriter
	mu     sync.Mutex
	status int // what the go-sdk answered; 0: not yet
	closed bool
}

// open reports whether the go-sdk answered with an event stream.
func (iw *injectingWriter) open() bool {
	return iw.status == http.StatusOK && iw.Header().Get("Content-Type") == "text/event-stream"
}

func (iw *injectingWriter) WriteHeader(code int) {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	iw.status = cmp.Or(iw.status, code)
	iw.ResponseWriter.WriteHeader(code)
}

func (iw *injectingWriter) Write(p []byte) (int, error) {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	iw.status = cmp.Or(iw.status, http.StatusOK)
	return iw.ResponseWriter.Write(p)
}

// Flush flushes the stream.
func (iw *injectingWriter) Flush() {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	iw.status = cmp.Or(iw.status, http.StatusOK)
	http.NewResponseController(iw.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (iw *injectingWriter) Unwrap() http.ResponseWriter { return iw.ResponseWriter }

// inject writes msg as an event of its own, if the stream is open.
func (iw *injectingWriter) inject(msg any) bool {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	if !iw.open() || iw.closed {
		return false
	}
	return sseEvent(iw.ResponseWriter, msg) == nil
}

func (iw *injectingWriter) close() {
	iw.mu.Lock()
	iw.closed = true
	iw.mu.Unlock()
}

// taskStatusNotifier is the changed hook of a task a 2025-11-25 session
// made: notifications/tasks/status on the session's standing stream (the
// requestor may not rely on them, and polls; they save it a poll).
func (s *Server) taskStatusNotifier(r *mcp.CallToolRequest) func(*tasks.Task) {
	id := sessionID(r)
	return func(t *tasks.Task) {
		s.taskListeners.changed(t)
		if id == "" {
			return
		}
		params := wireTask(t, false)
		if !s.sessionStreams.notify(id, map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params}) {
			s.Log.Debug("task status not notified: the session has no standing stream here", "task", t.ID)
		}
	}
}

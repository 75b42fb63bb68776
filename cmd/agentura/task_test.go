package main

import (
	"strings"
	"testing"

	"github.com/agentura/agentura/client"
)

// The task lines on stderr say what state the task is in, once per change,
// and never repeat the result: an OCR's completed task carries the
// recognised text as its status message, which the call prints on stdout
// already; a long or many-line working message is cut to one short line.
func TestTaskLinesLeaveOutTheResult(t *testing.T) {
	var w strings.Builder
	f := &taskFollower{w: &w, url: "http://localhost:8001/mcp"}
	text := "INVOICE 2026-114\nACME Ltd, 4 Harbour Road\nTotal due: 1,204.00 EUR"
	long := strings.Repeat("é", 150)
	for _, st := range []client.Task{
		{ID: "T1", Status: client.TaskWorking, StatusMessage: "running ocr_document"},
		{ID: "T1", Status: client.TaskWorking, StatusMessage: "page 1 of 2 recognised", Progress: 1, Total: 2},
		{ID: "T1", Status: client.TaskWorking, StatusMessage: "page 1 of 2 recognised", Progress: 1, Total: 2},
		{ID: "T1", Status: client.TaskWorking, StatusMessage: long},
		{ID: "T1", Status: client.TaskWorking, StatusMessage: "first line\nsecond line"},
		{ID: "T1", Status: client.TaskCompleted, StatusMessage: text},
		{ID: "T1", Status: client.TaskCompleted, StatusMessage: text},
	} {
		f.told(&st)
	}
	got := w.String()
	want := "task T1: the agent runs the call as a task; if this stops, resume with: agentura task get http://localhost:8001/mcp T1\n" +
		"task T1 working: running ocr_document\n" +
		"task T1 working: page 1 of 2 recognised (1/2)\n" +
		"task T1 working: " + strings.Repeat("é", maxStatusRunes) + "…\n" +
		"task T1 working: first line…\n" +
		"task T1 completed\n"
	if got != want {
		t.Errorf("task lines:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "INVOICE") || strings.Contains(got, "Total due") {
		t.Errorf("the task lines repeat the result's text:\n%s", got)
	}
}
